// Package seedclient plays the seed incident and its variants as a raw MCP
// client, against any base URL: the reference upstream (package dualstack)
// directly, or a proxy in front of it. It speaks both transports by hand so it
// can be cut at the exact moment the seed describes: after the server sent the
// tool result, before the client dispatched it.
//
//	rep, err := seedclient.RunSeed(ctx, seedclient.Config{
//		BaseURL:    "http://127.0.0.1:10000", // the proxy (or the upstream)
//		ControlURL: "http://127.0.0.1:8080",  // the upstream, for /debug hooks
//		Retry:      true,
//	})
//	fmt.Println(rep)            // one line: stream IDs, cursor, resume status, result, tool runs
//	fmt.Println(rep.Describe()) // the same in plain words
//
// [RunSeed] is the legacy-to-Streamable resume of the seed; [RunDrainRace] the
// same-transport drain race on a held POST /mcp SSE answer; [RunCleanResume]
// the clean counterpart that must raise no alarm. Each returns a [Report]:
// the event IDs received, whether the tool result arrived, the resume's HTTP
// status and body or events, and search_index's run count (read from the
// upstream's GET /debug/stats).
package seedclient
