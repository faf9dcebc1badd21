// Package childproc runs programs as child processes for the end-to-end harness and the load
// tool (cmd/iggy-gateway-load): above all the gateway binary, which both build and start the
// same way (BuildGateway, StartGateway), and the client programs the harness drives in the
// background (Start). A child runs in a process group of its own, so that killing it also
// ends the programs it started, and its output is kept in a bounded buffer (Output).
package childproc
