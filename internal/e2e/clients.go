package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/iggygw/iggy-gateway-kafka/internal/childproc"
)

// clientPaths are the locations scripts/install-test-deps.sh installs clients to, relative to
// the repository root.
const (
	javaLibDir = "e2e/java/lib"
	javaBinDir = "e2e/bin"
	pythonVenv = ".cache/venv"
	nodeDir    = "e2e/node"
	pythonDir  = "e2e/python"
	kafkajsPkg = "e2e/node/node_modules/kafkajs/package.json"
)

// root is the repository root; scenarios only run when it is found.
var root = sync.OnceValue(func() string {
	r, err := childproc.RepoRoot()
	if err != nil {
		panic(err)
	}
	return r
})

func rootPath(rel string) string { return filepath.Join(root(), rel) }

// goModuleVersion returns the version this module's go.mod (internal/e2e/go.mod, the module
// the tests are built in) requires of a module (test binaries carry no dependency build info).
func goModuleVersion(path string) string {
	data, err := os.ReadFile(rootPath("internal/e2e/go.mod"))
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(f) >= 2 && f[0] == path {
			return f[1]
		}
	}
	return "unknown"
}

func goFamily(name, module string) Family {
	return Family{Name: name, Detect: func() (string, string) { return module + " " + goModuleVersion(module), "" }}
}

var (
	franzFamily   = goFamily("franz-go", "github.com/twmb/franz-go")
	saramaFamily  = goFamily("sarama", "github.com/IBM/sarama")
	kafkaGoFamily = goFamily("kafka-go", "github.com/segmentio/kafka-go")
)

var javaToolsJar = regexp.MustCompile(`^kafka-tools-(.+)\.jar$`)

var javaFamily = Family{Name: "java", Detect: sync.OnceValues(func() (string, string) {
	if _, err := exec.LookPath("java"); err != nil {
		return "", "java not in PATH"
	}
	entries, _ := os.ReadDir(rootPath(javaLibDir))
	for _, e := range entries {
		if m := javaToolsJar.FindStringSubmatch(e.Name()); m != nil {
			return "Apache Kafka tools/clients " + m[1], ""
		}
	}
	return "", "no kafka-tools jar in " + javaLibDir
})}

// javaTool returns the path of an e2e/bin wrapper script, e.g. "kafka-topics.sh".
func javaTool(name string) string { return filepath.Join(rootPath(javaBinDir), name) }

var kcatVersion = regexp.MustCompile(`Version (\S+) .*librdkafka (\S+)`)

var kcatFamily = Family{Name: "kcat", Detect: sync.OnceValues(func() (string, string) {
	path, err := exec.LookPath("kcat")
	if err != nil {
		return "", "kcat not in PATH (Debian package kcat)"
	}
	out, err := exec.Command(path, "-V").CombinedOutput()
	if err != nil {
		return "", "kcat -V: " + err.Error()
	}
	if m := kcatVersion.FindStringSubmatch(string(out)); m != nil {
		return "kcat " + m[1] + " (librdkafka " + m[2] + ")", ""
	}
	return "kcat (version unknown)", ""
})}

// pythonBin is the virtualenv's interpreter.
func pythonBin() string { return filepath.Join(rootPath(pythonVenv), "bin", "python") }

var pythonFamily = Family{Name: "python", Detect: sync.OnceValues(func() (string, string) {
	if _, err := os.Stat(pythonBin()); err != nil {
		return "", "no virtualenv at " + pythonVenv
	}
	out, err := exec.Command(pythonBin(), "-c",
		"import importlib.metadata as m, confluent_kafka as c; print(m.version('confluent-kafka'), c.libversion()[0])").CombinedOutput()
	if err != nil {
		return "", "confluent-kafka not importable from " + pythonVenv + ": " + strings.TrimSpace(string(out))
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		return "", "unexpected confluent-kafka version output: " + string(out)
	}
	return "confluent-kafka " + f[0] + " (librdkafka " + f[1] + ")", ""
})}

// kafkaPythonFamily is kafka-python, a pure-Python client with protocol code of its own, in the
// same virtualenv as confluent-kafka.
var kafkaPythonFamily = Family{Name: "kafka-python", Detect: sync.OnceValues(func() (string, string) {
	if _, err := os.Stat(pythonBin()); err != nil {
		return "", "no virtualenv at " + pythonVenv
	}
	out, err := exec.Command(pythonBin(), "-c", "import importlib.metadata as m, kafka; print(m.version('kafka-python'))").CombinedOutput()
	if err != nil {
		return "", "kafka-python not importable from " + pythonVenv + ": " + strings.TrimSpace(string(out))
	}
	return "kafka-python " + strings.TrimSpace(string(out)), ""
})}

var kafkajsFamily = Family{Name: "kafkajs", Detect: sync.OnceValues(func() (string, string) {
	if _, err := exec.LookPath("node"); err != nil {
		return "", "node not in PATH"
	}
	data, err := os.ReadFile(rootPath(kafkajsPkg))
	if err != nil {
		return "", "kafkajs not installed in " + nodeDir + "/node_modules (npm ci)"
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal(data, &pkg); err != nil {
		return "", "unreadable " + kafkajsPkg + ": " + err.Error()
	}
	return "kafkajs " + pkg.Version, ""
})}
