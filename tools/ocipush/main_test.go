package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The push and pull through a registry server (the CNCF distribution
// registry on loopback, go -C tools run ./ocipush as the release workflow
// runs it) is tested in the release tool's module:
// tools/release/registry_test.go, which keeps the registry's
// dependencies out of this module.

func TestUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"-layout", "x.tar"}, {"-ref", "localhost:5000/x:v1"}, {"-layout", "x.tar", "-ref", "r:v1", "extra"}} {
		if err := run(context.Background(), args, io.Discard, os.Getenv); err == nil || !strings.Contains(err.Error(), "want -layout FILE -ref") {
			t.Errorf("%q: %v", args, err)
		}
	}
}

func TestRefusesWhatIsNoLayout(t *testing.T) {
	dir := t.TempDir()
	notTar := filepath.Join(dir, "x.tar")
	if err := os.WriteFile(notTar, []byte("not a tar"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ layout, ref, want string }{
		{filepath.Join(dir, "absent.tar"), "localhost:5000/x:v1", "no such file"},
		{notTar, "localhost:5000/x:v1", "oci:"},
		{notTar, "Not A Reference", "image reference"},
	} {
		err := run(context.Background(), []string{"-layout", tc.layout, "-ref", tc.ref}, io.Discard, os.Getenv)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v", tc, err)
		}
	}
}
