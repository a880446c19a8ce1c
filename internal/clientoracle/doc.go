// Package clientoracle holds the differential test of the guard's response
// path against the official MCP clients' own SSE readers (issue 22): the
// Go SDK's streamable client, the TypeScript SDK's eventsource-parser (run
// under node from tsreader/, installed by make test), and the WHATWG model
// of internal/whatwgsse. Random upstream streams go through the built .wasm;
// each reader must read the same events from the guard's bytes as from the
// upstream's, with every event ID reading back, through a resume, to the
// upstream's; and every minted ID must say truly whether its event is a
// result (a resume on a replica that saw nothing is rewound exactly then).
// The package has no code outside its tests.
package clientoracle
