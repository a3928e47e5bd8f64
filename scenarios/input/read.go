package input

import (
	"fmt"
	"io"
	"os"
)

// MaxFileBytes is the largest input file fleetsim reads: far above any scenario, plan or
// shard summary people write or fleetsim produces (the library's largest scenario is a few
// kilobytes, a 10,000-run campaign's summary a few megabytes), and small enough that reading
// it costs nothing a laptop notices.
const MaxFileBytes = 64 << 20

// TooLargeError is a file over the bound: reading stopped at the limit.
type TooLargeError struct {
	Path  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: larger than %d MiB, the most fleetsim reads from such a file (is it the file you meant?)", e.Path, e.Limit>>20)
}

// ReadFile reads the file at path, refusing one larger than MaxFileBytes with a
// *TooLargeError. Other errors are the *fs.PathError of os.Open or of the read.
func ReadFile(path string) ([]byte, error) {
	return ReadFileLimit(path, MaxFileBytes)
}

// ReadFileLimit is ReadFile with another bound, for inputs that are rightly larger or
// smaller than most (a plan's shard of many runs; a plan file).
func ReadFileLimit(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, &os.PathError{Op: "read", Path: path, Err: err}
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Path: path, Limit: limit}
	}
	return data, nil
}
