//! Files agentwire deletes (issue 32, kind 11): `cache prune` stays inside its cache and
//! never follows a link out of it.

use crate::common::*;

#[test]
fn cache_prune_never_follows_a_symlinked_version_directory() {
    // Before: a version directory that was a link to a directory outside the cache was
    // entered and its files deleted (`cache prune` removed `outside/keep.txt`).
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("keep.txt"), b"not the cache's").unwrap();
    let cli = cache.join("cli/claude-code");
    std::fs::create_dir_all(cli.join("1.0.0/linux-x64")).unwrap();
    std::fs::write(cli.join("1.0.0/linux-x64/cli.js"), b"x").unwrap();
    std::os::unix::fs::symlink(&outside, cli.join("2.0.0")).unwrap();
    // a link as an entry inside a real version directory is removed as a link
    std::fs::create_dir_all(cli.join("3.0.0")).unwrap();
    std::os::unix::fs::symlink(&outside, cli.join("3.0.0/linux-x64")).unwrap();
    let o = agentwire_ok_env(&[("AGENTWIRE_CACHE_DIR", &cache)], &["cache", "prune"]);
    let _ = o;
    assert_eq!(
        std::fs::read(outside.join("keep.txt")).unwrap(),
        b"not the cache's"
    );
    assert!(!cli.join("1.0.0").exists(), "the real entry was pruned");
    assert!(
        !cli.join("3.0.0/linux-x64").exists(),
        "the link itself was removed"
    );
}
