package placement

import (
	"slices"
	"testing"
)

func TestSingleAnswersThisGatewayOnTheRequestsListener(t *testing.T) {
	addrs := map[string]Node{"INTERNAL": {Host: "10.0.0.1", Port: 9093}, "EXTERNAL": {Host: "gw.example", Port: 19093}}
	s := Single{NodeID: 7, Advertised: func(l string) (string, int32) { return addrs[l].Host, addrs[l].Port }}
	for name, a := range addrs {
		want := Node{ID: 7, Host: a.Host, Port: a.Port}
		if got := s.Brokers(name); !slices.Equal(got, []Node{want}) {
			t.Errorf("Brokers(%s) = %v, want [%v]", name, got, want)
		}
		if got := s.Coordinator(name, "group"); got != want {
			t.Errorf("Coordinator(%s) = %v, want %v", name, got, want)
		}
	}
	if got := s.Leader("orders", 3); got != 7 {
		t.Errorf("Leader = %d, want 7", got)
	}
	if got := s.Controller(); got != 7 {
		t.Errorf("Controller = %d, want 7", got)
	}
}
