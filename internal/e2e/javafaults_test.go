package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestFaultsJava runs the produce fault scenarios with the Java client's idempotent producer
// (docs/IDEMPOTENCE.md): Iggy connections dropped during produce, and the gateway killed with
// SIGKILL and restarted.
func TestFaultsJava(t *testing.T) {
	runScenarios(t, javaFamily, []Scenario{
		{Name: "fault-iggy-drop-during-produce", Needs: faultProduceNeeds, Covers: []Cell{CellIdempotence}, Run: javaIggyDropDuringProduce},
		{Name: "fault-gateway-sigkill-mid-produce", Needs: faultProduceNeeds, Covers: []Cell{CellIdempotence}, Run: javaGatewayKilled},
	})
}

// javaIdempotentProducer is a Java program (run from source: java launches a single source
// file) that produces numbered records java-NNNNNN with key k-N with an idempotent producer
// (enable.idempotence=true, acks=all, 5 requests in flight), about 1500 a second, and prints
// one line per delivery report ("ok VALUE PARTITION OFFSET" or "err VALUE ERROR"), then
// "done N" with the number of records without a report after flush.
const javaIdempotentProducer = `
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

public class IdempotentProducer {
    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", args[0]);
        p.put("enable.idempotence", "true");
        p.put("acks", "all");
        p.put("max.in.flight.requests.per.connection", "5");
        p.put("linger.ms", "5");
        p.put("delivery.timeout.ms", "120000");
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        String topic = args[1];
        int n = Integer.parseInt(args[2]);
        AtomicInteger pending = new AtomicInteger(n);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < n; i++) {
                String v = String.format("java-%06d", i);
                producer.send(new ProducerRecord<>(topic, "k-" + i, v), (md, err) -> {
                    pending.decrementAndGet();
                    synchronized (System.out) {
                        if (err == null) {
                            System.out.println("ok " + v + " " + md.partition() + " " + md.offset());
                        } else {
                            System.out.println("err " + v + " " + err.toString().replace('\n', ' '));
                        }
                        System.out.flush();
                    }
                });
                if (i % 10 == 9) {
                    Thread.sleep(5);
                }
            }
            producer.flush();
        }
        System.out.println("done " + pending.get());
        System.out.flush();
    }
}
`

// javaProducerCmd writes javaIdempotentProducer to a temporary directory and returns the
// command that runs it against bootstrap, producing n records to topic.
func javaProducerCmd(t *testing.T, bootstrap, topic string, n int) Cmd {
	t.Helper()
	src := filepath.Join(t.TempDir(), "IdempotentProducer.java")
	if err := os.WriteFile(src, []byte(javaIdempotentProducer), 0o644); err != nil {
		t.Fatal(err)
	}
	return Cmd{Name: "java", Args: []string{"-cp", filepath.Join(rootPath(javaLibDir), "*"),
		"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m",
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-Dorg.slf4j.simpleLogger.logFile=System.err",
		src, bootstrap, topic, strconv.Itoa(n)}}
}

// javaIggyDropDuringProduce: every Iggy connection of the gateway is dropped five times while
// the Java idempotent producer writes; every record is delivered, stored where its report said,
// once, in order.
func javaIggyDropDuringProduce(t *testing.T, _ *Env) {
	env := startMemIggyEnv(t)
	reportingProducerFault(t, env, 3, 5000, "java-", func(topic string, n int) Cmd {
		return javaProducerCmd(t, env.Bootstrap, topic, n)
	}, func() {
		for i := 0; i < 5; i++ {
			env.iggy.server.DropConnections()
			time.Sleep(200 * time.Millisecond)
		}
	}, "five drops of the gateway's Iggy connections")
}

// javaGatewayKilled: the gateway is killed with SIGKILL while the Java idempotent producer
// writes, and started again on the same port; the producer delivers every record by itself,
// each stored where its report said, once, in order.
func javaGatewayKilled(t *testing.T, _ *Env) {
	env := startRestartableEnv(t)
	reportingProducerFault(t, env, 2, 5000, "java-", func(topic string, n int) Cmd {
		return javaProducerCmd(t, env.Bootstrap, topic, n)
	}, func() { crash(t, env) }, "the gateway's SIGKILL and restart")
}
