package serverkit

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// PrintVersions writes what is compiled into the binary, read from its build
// information: with no argument the Go toolchain and every module, one a line;
// given a module path (or "go"), that version alone, which is what the
// [versions] commands of server.toml read.
func PrintVersions(w io.Writer, modules []string) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		fmt.Fprintln(w, "unknown (no build information)")
		return
	}
	versions := map[string]string{"go": runtime.Version()}
	for _, dep := range info.Deps {
		version := dep.Version
		if r := dep.Replace; r != nil {
			version = r.Version
			if version == "" { // a local folder, e.g. callbench/goshared
				version = "=> " + r.Path
			}
		}
		versions[dep.Path] = version
	}
	if len(modules) == 0 {
		fmt.Fprintf(w, "%s (%s)\n", info.Main.Path, runtime.Version())
		for _, dep := range info.Deps {
			fmt.Fprintf(w, "%s %s\n", dep.Path, versions[dep.Path])
		}
		return
	}
	for _, m := range modules {
		if v, ok := versions[m]; ok {
			fmt.Fprintln(w, v)
		} else {
			fmt.Fprintf(w, "%s is not compiled in\n", m)
		}
	}
}
