// Package dbus is the production driver of the fleet machine agent: it implements
// agentsystemd.Systemd against a real systemd over D-Bus with github.com/coreos/go-systemd/v22.
//
// The agent owns one unit directory (by default /run/fleet/units). A load task writes the unit
// file there and links it into systemd's runtime unit directory (LinkUnitFiles, runtime, forced),
// and enables it (EnableUnitFiles, runtime, forced) if the file has an [Install] section, as
// upstream fleet did (if systemd refuses, the file is removed and the load fails); an unload
// disables those links, resets a failed state and removes the file; a daemon-reload is
// systemd's Reload; start and stop are StartUnit and StopUnit in mode "replace", waiting for the
// job result. Units reads the files in the directory, hashes their parsed content and asks
// systemd for each unit's LoadState, ActiveState, SubState and NeedDaemonReload: systemd's view,
// never what the agent asked for. What the agent acted on (fleet's current state) is the agent
// core's (agentsystemd.Memory), not the driver's.
//
// Unit names are checked with model/unit.ValidateName and must be a single path element, so no
// unit file can land outside the directory.
//
// Package sdtest starts a real systemd in a systemd-nspawn sandbox for tests.
package dbus
