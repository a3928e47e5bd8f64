package unitfile

// File is a parsed unit file: its sections, in order, each with its options, in order.
//
// A File returned by [Parse] or [FromOptions] is in canonical shape: sections appear in
// the order of their first option, a section name appears once (repeated sections are
// merged), and no section is empty. Comments, blank lines and surrounding whitespace are
// not kept. Duplicate option names are kept, in order.
//
// Files built by hand need not be canonical; [Serialize] and [File.Hash] treat them as if
// they were (merging same-named sections and skipping empty ones).
type File struct {
	Sections []Section
}

// Section is one "[Name]" section of a unit file.
type Section struct {
	Name    string
	Options []Option
}

// Option is one "Name=Value" line (or continued lines) within a section.
type Option struct {
	Name  string
	Value string
}

// UnitOption is the flat, self-describing form of an option used by the fleet API v1 and
// the registry: a unit is a list of these.
type UnitOption struct {
	Section string
	Name    string
	Value   string
}

// FromOptions builds the canonical File holding opts: sections in the order of their first
// option, options in their original order.
func FromOptions(opts []UnitOption) *File {
	var b builder
	for _, o := range opts {
		b.add(o.Section, o.Name, o.Value)
	}
	return b.file()
}

// Options returns f's options as a flat list, section by section, in File order.
func (f *File) Options() []UnitOption {
	if f == nil {
		return nil
	}
	var out []UnitOption
	for _, s := range f.Sections {
		for _, o := range s.Options {
			out = append(out, UnitOption{Section: s.Name, Name: o.Name, Value: o.Value})
		}
	}
	return out
}

// Values returns, in order, the values of every option called name in every section
// called section. It returns nil if there are none.
func (f *File) Values(section, name string) []string {
	if f == nil {
		return nil
	}
	var out []string
	for _, s := range f.Sections {
		if s.Name != section {
			continue
		}
		for _, o := range s.Options {
			if o.Name == name {
				out = append(out, o.Value)
			}
		}
	}
	return out
}

// Description returns the first [Unit] Description= value, or "" if there is none.
func (f *File) Description() string {
	if v := f.Values("Unit", "Description"); len(v) > 0 {
		return v[0]
	}
	return ""
}

// String returns the canonical serialization of f; see [Serialize].
func (f *File) String() string { return Serialize(f) }

// canonical returns f in canonical shape (same-named sections merged in first-option order,
// empty sections dropped). It never returns nil.
func (f *File) canonical() *File {
	var b builder
	if f != nil {
		for _, s := range f.Sections {
			for _, o := range s.Options {
				b.add(s.Name, o.Name, o.Value)
			}
		}
	}
	return b.file()
}

// builder accumulates options into canonical shape. A section is created by its first
// option, so sections without options never appear.
type builder struct {
	sections []Section
	index    map[string]int // section name → position in sections
}

func (b *builder) add(section, name, value string) {
	i, ok := b.index[section]
	if !ok {
		if b.index == nil {
			b.index = make(map[string]int)
		}
		i = len(b.sections)
		b.index[section] = i
		b.sections = append(b.sections, Section{Name: section})
	}
	b.sections[i].Options = append(b.sections[i].Options, Option{Name: name, Value: value})
}

func (b *builder) file() *File {
	return &File{Sections: b.sections}
}
