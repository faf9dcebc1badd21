package e2e

import (
	"encoding/json"
	"path"
	"strconv"
	"testing"
	"time"
)

// scriptClient is a client library driven through a script (e2e/python/kafka_client.py,
// e2e/node/kafka_client.js): each run is one command against --bootstrap that reads its input
// (records) as JSON on stdin and prints what the client saw as JSON.
type scriptClient struct {
	interpreter func() string
	script      string   // relative to the repository root
	env         []string // added to the environment
}

var (
	pythonScript      = scriptClient{interpreter: pythonBin, script: pythonDir + "/kafka_client.py"}
	kafkaPythonScript = scriptClient{interpreter: pythonBin, script: pythonDir + "/kafka_python_client.py"}
	kafkajsScript     = scriptClient{interpreter: func() string { return "node" }, script: nodeDir + "/kafka_client.js",
		env: []string{"KAFKAJS_NO_PARTITIONER_WARNING=1"}}
)

// run runs the command args[0] with the other args, stdin (unless nil) as its JSON input, and
// decodes what it printed into out.
func (c scriptClient) run(t *testing.T, env *Env, stdin any, out any, args ...string) {
	t.Helper()
	var in []byte
	if stdin != nil {
		var err error
		if in, err = json.Marshal(stdin); err != nil {
			t.Fatal(err)
		}
	}
	res := mustRun(t, Cmd{Name: c.interpreter(), Args: append([]string{rootPath(c.script), args[0], "--bootstrap", env.Bootstrap}, args[1:]...),
		Stdin: string(in), Timeout: 90 * time.Second, Env: c.env})
	if err := json.Unmarshal([]byte(res.Stdout), out); err != nil {
		t.Fatalf("%s %s printed no JSON: %v\n%s\nstderr:\n%s", path.Base(c.script), args[0], err, res.Stdout, res.Stderr)
	}
}

// scriptMetadata is what the scripts' metadata command prints. Error is a partition's error
// as librdkafka reports it (kafkajs throws instead).
type scriptMetadata struct {
	Brokers []struct {
		ID   int32  `json:"id"`
		Host string `json:"host"`
		Port int    `json:"port"`
	} `json:"brokers"`
	Topics map[string][]struct {
		Partition int32   `json:"partition"`
		Leader    int32   `json:"leader"`
		Error     *string `json:"error"`
	} `json:"topics"`
}

// check fails t unless the gateway at env.Bootstrap is the only broker, 1, and the topics of
// want (name: partition count) have their partitions, each led by broker 1 without error.
func (md scriptMetadata) check(t *testing.T, env *Env, want map[string]int) {
	t.Helper()
	if len(md.Brokers) != 1 || md.Brokers[0].ID != 1 || md.Brokers[0].Host+":"+strconv.Itoa(md.Brokers[0].Port) != env.Bootstrap {
		t.Errorf("brokers %+v, want broker 1 at %s", md.Brokers, env.Bootstrap)
	}
	for name, n := range want {
		parts := md.Topics[name]
		if len(parts) != n {
			t.Errorf("topic %s: %d partitions, want %d", name, len(parts), n)
		}
		for i, p := range parts {
			if p.Partition != int32(i) || p.Leader != 1 || p.Error != nil {
				t.Errorf("topic %s partition %+v, want partition %d led by 1 without error", name, p, i)
			}
		}
	}
}

// scriptAdmin is what the scripts' admin command prints about the steps both run: create a
// topic with 2 partitions and retention.ms 86400000, raise it to 4 partitions, alter
// retention.ms to 3600000, delete it.
type scriptAdmin struct {
	PartitionsAfterCreate           int    `json:"partitions_after_create"`
	PartitionsAfterCreatePartitions int    `json:"partitions_after_create_partitions"`
	RetentionMsAtCreate             string `json:"retention_ms_at_create"`
	RetentionMsAfterAlter           string `json:"retention_ms_after_alter"`
	ListedAfterDelete               bool   `json:"listed_after_delete"`
}

func (a scriptAdmin) check(t *testing.T) {
	t.Helper()
	if a.PartitionsAfterCreate != 2 || a.PartitionsAfterCreatePartitions != 4 {
		t.Errorf("partitions after create %d (want 2), after adding partitions %d (want 4)", a.PartitionsAfterCreate, a.PartitionsAfterCreatePartitions)
	}
	if a.RetentionMsAtCreate != "86400000" || a.RetentionMsAfterAlter != "3600000" {
		t.Errorf("retention.ms at create %q (want 86400000), after alter %q (want 3600000)", a.RetentionMsAtCreate, a.RetentionMsAfterAlter)
	}
	if a.ListedAfterDelete {
		t.Error("topic still listed after its deletion")
	}
}
