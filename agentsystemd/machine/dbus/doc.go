// Package dbus is the production driver of the fleet machine agent: it implements
// agentsystemd.Systemd against a real systemd over D-Bus with github.com/coreos/go-systemd/v22.
//
// The agent owns one unit directory (by default /run/fleet/units). A load task writes the unit
// file there and links it into systemd's runtime unit directory (LinkUnitFiles, runtime, forced);
// an unload disables that link, resets a failed state and removes the file; a daemon-reload is
// systemd's Reload; start and stop are StartUnit and StopUnit in mode "replace", waiting for the
// job result. Units reads the files in the directory, hashes their parsed content and asks
// systemd for each unit's LoadState, ActiveState, SubState and NeedDaemonReload, so the states the
// agent reports come from systemd, never from what it asked for.
//
// Unit names are checked with model/unit.ValidateName and must be a single path element, so no
// unit file can land outside the directory.
//
// Package sdtest starts a real systemd in a systemd-nspawn sandbox for tests.
package dbus
