package builder

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// tempMark is part of the name of every temporary file writeFileIfChanged
// creates; syncTree leaves such files alone, since a concurrent build may be
// about to rename one into place.
const tempMark = ".wasmbuild-tmp"

func isTempName(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, tempMark)
}

// writeFileIfChanged writes data to path unless the file already holds exactly
// that content. It writes through a temporary file and a rename, so a
// concurrent build or reader never sees a half-written file. It reports
// whether it wrote.
func writeFileIfChanged(path string, data []byte) (bool, error) {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+tempMark+"*")
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Close(); err != nil {
		return false, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return false, err
	}
	return true, nil
}

// syncTree makes dir hold exactly files (slash-separated relative path ->
// content): it writes what differs and removes every other regular file
// (and directories left empty). It returns how many files it wrote or removed.
func syncTree(dir string, files map[string][]byte) (changed int, err error) {
	if err := makeDirsWritable(dir); err != nil {
		return 0, err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		wrote, err := writeFileIfChanged(filepath.Join(dir, filepath.FromSlash(name)), files[name])
		if err != nil {
			return changed, err
		}
		if wrote {
			changed++
		}
	}

	var stale, dirs []string
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if rel != "." {
				dirs = append(dirs, path)
			}
			return nil
		}
		if _, ok := files[filepath.ToSlash(rel)]; !ok && !isTempName(d.Name()) {
			stale = append(stale, path)
		}
		return nil
	})
	if err != nil {
		return changed, err
	}
	for _, path := range stale {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return changed, fmt.Errorf("removing stale %s: %w", path, err)
		}
		changed++
	}
	// Deepest first, so parents empty out after their children.
	for i := len(dirs) - 1; i >= 0; i-- {
		if entries, err := os.ReadDir(dirs[i]); err == nil && len(entries) == 0 {
			os.Remove(dirs[i])
		}
	}
	return changed, nil
}

// makeDirsWritable gives the owner write permission on every directory under
// dir: a tree copied by hand from the read-only module cache would otherwise
// refuse the temporary files and renames syncTree needs.
func makeDirsWritable(dir string) error {
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode().Perm()&0o200 == 0 {
			return os.Chmod(path, info.Mode().Perm()|0o700)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
