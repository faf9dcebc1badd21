package e2e

import (
	"fmt"
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if problems := stopShared(); problems != "" {
		fmt.Println("e2e: FAIL at teardown:", problems)
		if code == 0 {
			code = 1
		}
	}
	rs := recordedResults()
	printSummary(os.Stdout, rs)
	if path := os.Getenv("IGGYGW_E2E_RESULTS"); path != "" {
		if err := writeResults(path, rs); err != nil {
			fmt.Println("e2e: write results:", err)
			code = 1
		}
	}
	os.Exit(code)
}
