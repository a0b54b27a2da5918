package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// The command line as people type it: flags before or after the operands
// (Go's flag package stops at the first operand), "--" ends the flags,
// --help or -h prints the command's own usage on stdout (exit 0), and a
// wrong flag prints it on stderr (exit 2).

// interspersed reorders args for fs.Parse: every flag (with its value, for
// a flag that takes one and is not given as --name=value) first, in order,
// then "--" and the operands in order. A lone "-" (stdin) is an operand;
// after "--" everything is. An unknown flag stays among the flags, so that
// fs.Parse names it; so does a last flag without its value.
func interspersed(fs *flag.FlagSet, args []string) []string {
	var flags, operands []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			operands = append(operands, args[i+1:]...)
			i = len(args)
		case len(a) < 2 || a[0] != '-':
			operands = append(operands, a)
		default:
			flags = append(flags, a)
			name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
			if strings.Contains(name, "=") {
				continue
			}
			if f := fs.Lookup(name); f != nil && !isBool(f) {
				if i+1 == len(args) {
					return flags // its value is missing: fs.Parse says so
				}
				i++
				flags = append(flags, args[i])
			}
		}
	}
	return append(append(flags, "--"), operands...)
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// parseFlags parses args (flags anywhere) into fs. ok is false when the
// caller is to return exit at once: 0 after --help or -h (text printed on
// stdout), 2 after a wrong flag (the error and text on stderr).
func parseFlags(fs *flag.FlagSet, args []string, text string, stdout, stderr io.Writer) (exit int, ok bool) {
	fs.SetOutput(io.Discard)
	err := fs.Parse(interspersed(fs, args))
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, text)
		return 0, false
	}
	return usageErrorOf(stderr, fs.Name(), text, "%v", err), false
}

// usageErrorOf prints a usage error of the command named name (its
// message, then its usage text) on stderr and returns the exit status 2.
func usageErrorOf(stderr io.Writer, name, text, format string, args ...any) int {
	fmt.Fprintf(stderr, "%s: %s\n\n%s", name, fmt.Sprintf(format, args...), text)
	return 2
}

// subcommandUsage gives a subcommand's usage text, for help COMMAND
// ("help help" is the main usage).
func subcommandUsage(name string) (string, bool) {
	switch name {
	case "compare":
		return compareUsage, true
	case "cache":
		return cacheUsage, true
	case "export":
		return exportUsage, true
	case "help":
		return usage, true
	}
	return "", false
}

// runHelp is "polyloop-assemble help [COMMAND]": the usage of the command,
// or the main one, on stdout.
func runHelp(args []string, stdout, stderr io.Writer) int {
	switch len(args) {
	case 0:
		fmt.Fprint(stdout, usage)
		return 0
	case 1:
		if text, ok := subcommandUsage(args[0]); ok {
			fmt.Fprint(stdout, text)
			return 0
		}
		return usageErrorOf(stderr, "polyloop-assemble help", usage, "no command %q; the commands are compare, cache and export", args[0])
	}
	return usageErrorOf(stderr, "polyloop-assemble help", usage, "give at most one command")
}
