// Command compat-report renders docs/COMPATIBILITY.md from the results the end-to-end suite
// writes (IGGYGW_E2E_RESULTS), prints the per-scenario outcomes, and checks a committed
// report against a run.
//
//	compat-report -results FILE [-write docs/COMPATIBILITY.md] [-check docs/COMPATIBILITY.md]
//
// -check fails when the committed report claims a pass the run did not show, and warns when
// it is merely out of date.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/iggygw/iggy-gateway-kafka/internal/e2e"
)

func main() {
	results := flag.String("results", "", "results JSON written by the end-to-end suite (IGGYGW_E2E_RESULTS)")
	write := flag.String("write", "", "write the rendered report to this file")
	check := flag.String("check", "", "check this committed report against the results")
	flag.Parse()
	if err := run(*results, *write, *check); err != nil {
		fmt.Fprintln(os.Stderr, "compat-report:", err)
		os.Exit(1)
	}
}

func run(resultsPath, writePath, checkPath string) error {
	if resultsPath == "" {
		return fmt.Errorf("-results is required")
	}
	data, err := os.ReadFile(resultsPath)
	if err != nil {
		return err
	}
	var rs e2e.Results
	if err := json.Unmarshal(data, &rs); err != nil {
		return fmt.Errorf("%s: %w", resultsPath, err)
	}
	if len(rs.Results) == 0 {
		return fmt.Errorf("%s holds no results: did the end-to-end suite run?", resultsPath)
	}
	doc := e2e.RenderCompatibility(rs.Results)
	fmt.Println(doc)
	if writePath != "" {
		if err := os.WriteFile(writePath, []byte(doc), 0o644); err != nil {
			return err
		}
	}
	if checkPath != "" {
		committed, err := os.ReadFile(checkPath)
		if err != nil {
			return err
		}
		if bad := e2e.UnprovenClaims(string(committed), rs.Results); len(bad) > 0 {
			for _, b := range bad {
				fmt.Fprintln(os.Stderr, "  "+b)
			}
			return fmt.Errorf("%s claims passes this run did not show; regenerate it with -write", checkPath)
		}
		if string(committed) != doc {
			fmt.Fprintf(os.Stderr, "compat-report: warning: %s is out of date; regenerate it with -write\n", checkPath)
		}
	}
	return nil
}
