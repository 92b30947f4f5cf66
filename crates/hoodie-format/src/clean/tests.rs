use super::*;
use crate::timeline::instant::instant_to_millis;
use crate::timeline::instant::Instant;

fn spec(policy: CleanPolicy, retained: usize) -> CleanSpec {
    CleanSpec {
        automatic: true,
        policy,
        commits_retained: retained,
        hours_retained: 1,
        file_versions_retained: retained,
        max_commits: 1,
        incremental: true,
    }
}

fn timeline(names: &[&str]) -> Timeline {
    let files = names
        .iter()
        .map(|n| Instant::parse_file_name(n).unwrap())
        .collect();
    Timeline::from_files(files, 1, ".hoodie".into())
}

#[test]
fn keep_latest_commits_keeps_the_nth_latest_and_never_passes_a_pending_write() {
    let t = timeline(&[
        "20240101000000001.commit",
        "20240101000000002.commit",
        "20240101000000003.commit",
        "20240101000000004.commit",
    ]);
    let s = spec(CleanPolicy::KeepLatestCommits, 2);
    let ectr = earliest_commit_to_retain(&s, &t).unwrap();
    assert_eq!(ectr.timestamp, "20240101000000003");
    // as many commits as retained: nothing to clean yet
    assert!(earliest_commit_to_retain(&spec(CleanPolicy::KeepLatestCommits, 4), &t).is_none());
    let t = timeline(&[
        "20240101000000001.commit",
        "20240101000000002.inflight",
        "20240101000000003.commit",
        "20240101000000004.commit",
    ]);
    let ectr = earliest_commit_to_retain(&spec(CleanPolicy::KeepLatestCommits, 1), &t).unwrap();
    assert_eq!(ectr.timestamp, "20240101000000001");
}

#[test]
fn keep_latest_by_hours_keeps_the_commits_of_the_last_hours() {
    let t = timeline(&[
        "20240101000000000.commit",
        "20240101013000000.commit",
        "20240101020000000.commit",
    ]);
    let hours = spec(CleanPolicy::KeepLatestByHours, 1);
    // counted back from a given time (archival: the latest commit's)
    let ectr = earliest_commit_to_retain_at(&hours, &t, None).unwrap();
    assert_eq!(ectr.timestamp, "20240101013000000");
    let at = instant_to_millis("20240101024500000");
    let ectr = earliest_commit_to_retain_at(&hours, &t, at).unwrap();
    assert_eq!(ectr.timestamp, "20240101020000000");
    // a clean counts back from now: none of these commits is within the hour, nothing kept
    // from (Hudi's CleanPlanner then cleans nothing)
    assert!(earliest_commit_to_retain(&hours, &t).is_none());
    assert!(earliest_commit_to_retain(&spec(CleanPolicy::KeepLatestByHours, 0), &t).is_none());
    assert!(earliest_commit_to_retain(&spec(CleanPolicy::KeepLatestFileVersions, 1), &t).is_none());
}

#[test]
fn the_policy_is_inferred_from_the_retention_key_set() {
    let resolve = |set: &[(&ConfigKey, &str)]| {
        let set: Vec<(&str, String)> = set.iter().map(|(k, v)| (k.key, v.to_string())).collect();
        CleanSpec::resolve(
            |k| {
                set.iter()
                    .find(|(n, _)| *n == k.key)
                    .map(|(_, v)| v.clone())
                    .or(k.default.map(str::to_string))
            },
            |k| set.iter().any(|(n, _)| *n == k.key),
        )
    };
    assert_eq!(resolve(&[]).unwrap().policy, CleanPolicy::KeepLatestCommits);
    let s = resolve(&[(&config::CLEANER_FILE_VERSIONS_RETAINED, "2")]).unwrap();
    assert_eq!(
        (s.policy, s.file_versions_retained),
        (CleanPolicy::KeepLatestFileVersions, 2)
    );
    let s = resolve(&[(&config::CLEANER_HOURS_RETAINED, "5")]).unwrap();
    assert_eq!(
        (s.policy, s.hours_retained),
        (CleanPolicy::KeepLatestByHours, 5)
    );
    let s = resolve(&[(&config::CLEANER_POLICY, "keep_latest_by_hours")]).unwrap();
    assert_eq!(s.policy, CleanPolicy::KeepLatestByHours);
    let err = resolve(&[(&config::CLEANER_POLICY, "KEEP_ALL")]).unwrap_err();
    assert!(err.to_string().contains("hoodie.cleaner.policy"), "{err}");
    let err = resolve(&[(&config::CLEANER_COMMITS_RETAINED, "0")]).unwrap_err();
    assert!(err.to_string().contains("at least 1"), "{err}");
    let s = resolve(&[(&config::CLEAN_AUTOMATIC, "FALSE")]).unwrap();
    assert!(!s.automatic);
}
