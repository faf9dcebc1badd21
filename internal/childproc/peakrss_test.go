package childproc

import (
	"os"
	"strings"
	"testing"
)

func TestParseStatusHWM(t *testing.T) {
	status := "Name:\tgw\nVmPeak:\t  900 kB\nVmHWM:\t    2048 kB\nVmRSS:\t 1000 kB\n"
	if got, err := parseStatusHWM(strings.NewReader(status)); err != nil || got != 2<<20 {
		t.Fatalf("parseStatusHWM = %d, %v; want %d", got, err, 2<<20)
	}
	for _, bad := range []string{"Name:\tgw\n", "VmHWM:\tlots kB\n"} {
		if _, err := parseStatusHWM(strings.NewReader(bad)); err == nil {
			t.Errorf("parseStatusHWM(%q) succeeded", bad)
		}
	}
}

func TestPeakRSSOfThisProcess(t *testing.T) {
	if rss, err := PeakRSS(os.Getpid()); err != nil || rss <= 0 {
		t.Fatalf("peak RSS %d, %v", rss, err)
	}
}
