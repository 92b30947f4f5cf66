use super::*;

/// A timeline of completed `action`s at times 1..=n, but for those `extra` gives a file of.
fn timeline(n: usize, action: &str, extra: &[&str]) -> Timeline {
    let mut names: Vec<String> = (1..=n)
        .map(ts)
        .filter(|t| !extra.iter().any(|e| e.starts_with(t.as_str())))
        .map(|t| format!("{t}.{action}"))
        .collect();
    names.extend(extra.iter().map(|s| s.to_string()));
    let files = names
        .iter()
        .map(|n| Instant::parse_file_name(n).unwrap())
        .collect();
    Timeline::from_files(files, 1, ".hoodie".into())
}

fn ts(i: usize) -> String {
    format!("20240101000{i:06}")
}

fn input(min: usize, max: usize) -> SelectInput {
    SelectInput {
        min_commits: min,
        max_commits: max,
        ..Default::default()
    }
}

fn times(v: &[(String, Action)]) -> Vec<String> {
    v.iter().map(|(t, _)| t.clone()).collect()
}

#[test]
fn nothing_until_past_max_then_down_to_min() {
    assert!(instants_to_archive(&timeline(30, "commit", &[]), &input(20, 30)).is_empty());
    let out = instants_to_archive(&timeline(31, "commit", &[]), &input(20, 30));
    assert_eq!(times(&out), (1..=11).map(ts).collect::<Vec<_>>());
    assert!(out.iter().all(|(_, a)| *a == Action::Commit));
}

#[test]
fn a_pending_write_keeps_the_commit_before_it() {
    let t = timeline(8, "commit", &[&format!("{}.inflight", ts(4))]);
    // 4 is pending: completed 1,2,3,5..8; archival stops before 3 (the last commit before 4)
    let out = instants_to_archive(&t, &input(2, 3));
    assert_eq!(times(&out), vec![ts(1), ts(2)]);
}

#[test]
fn the_first_savepoint_stops_archival_unless_beyond_savepoint() {
    let sp = format!("{}.savepoint", ts(3));
    let c = format!("{}.commit", ts(3));
    let t = timeline(10, "commit", &[&c, &sp]);
    assert_eq!(
        times(&instants_to_archive(&t, &input(2, 3))),
        vec![ts(1), ts(2)]
    );
    let beyond = SelectInput {
        beyond_savepoint: true,
        ..input(2, 3)
    };
    let out = times(&instants_to_archive(&t, &beyond));
    assert!(!out.contains(&ts(3)), "{out:?}");
    assert_eq!(out.len(), 8);
}

#[test]
fn the_cleaners_earliest_commit_raises_the_bounds() {
    let t = timeline(40, "commit", &[]);
    let with_ectr = SelectInput {
        earliest_commit_to_retain: Some(ts(10)),
        ..input(20, 30)
    };
    // 30 commits after the ECTR + 2 = 32 kept at least, max 42: nothing archived
    assert!(instants_to_archive(&t, &with_ectr).is_empty());
    let near = SelectInput {
        earliest_commit_to_retain: Some(ts(31)),
        ..input(20, 30)
    };
    assert_eq!(instants_to_archive(&t, &near).len(), 20);
    let commits: Vec<&Instant> = t.completed_writes().collect();
    assert_eq!(keep_bounds(&commits, &with_ectr), (32, 42));
}

#[test]
fn replacecommits_stay_until_a_clean_passed_them() {
    let r = format!("{}.replacecommit", ts(5));
    let t = timeline(12, "commit", &[&r]);
    // no clean: the first replacecommit bounds archival
    assert_eq!(times(&instants_to_archive(&t, &input(2, 3))).len(), 4);
    let cleaned = SelectInput {
        latest_clean: Some((ts(11), Some(ts(6)))),
        ..input(2, 3)
    };
    let out = instants_to_archive(&t, &cleaned);
    assert_eq!(out.len(), 10);
    assert!(out.contains(&(ts(5), Action::ReplaceCommit)));
}

#[test]
fn merge_on_read_keeps_the_deltacommits_a_compaction_counts() {
    let t = timeline(12, "deltacommit", &[]);
    let mor = SelectInput {
        compaction_delta_commits: Some(5),
        ..input(2, 3)
    };
    // no compaction yet, 12 deltacommits: the 5 latest (8..12) stay
    assert_eq!(
        times(&instants_to_archive(&t, &mor)),
        (1..=7).map(ts).collect::<Vec<_>>()
    );
    let compacted = timeline(12, "deltacommit", &[&format!("{}.commit", ts(13))]);
    // a compaction after them: nothing bounds the deltacommits before it
    assert_eq!(instants_to_archive(&compacted, &mor).len(), 11);
}

#[test]
fn cleans_and_rollbacks_are_trimmed_each_apart() {
    let mut extra: Vec<String> = (100..104).map(|i| format!("{}.clean", ts(i))).collect();
    extra.push(format!("{}.rollback", ts(200)));
    let refs: Vec<&str> = extra.iter().map(String::as_str).collect();
    let t = timeline(3, "commit", &refs);
    let out = instants_to_archive(&t, &input(2, 3));
    assert_eq!(
        out,
        vec![(ts(100), Action::Clean), (ts(101), Action::Clean)],
        "4 cleans > 3: down to 2; 1 rollback stays; 3 commits stay"
    );
}

#[test]
fn compactions_group_under_their_commit() {
    assert_eq!(comparable(&Action::Compaction), Action::Commit);
    assert_eq!(comparable(&Action::Clustering), Action::ReplaceCommit);
    assert_eq!(comparable(&Action::Clean), Action::Clean);
}

#[test]
fn on_versions_8_and_9_cleans_and_rollbacks_go_with_the_commits_after_them() {
    // commits at 10, 20, .., 60 with a clean at 25, a rollback at 35 and a clean at 55
    let mut names: Vec<String> = (1..=6).map(|i| format!("{}.commit", ts(i * 10))).collect();
    names.extend([
        format!("{}.clean", ts(25)),
        format!("{}.rollback", ts(35)),
        format!("{}.clean", ts(55)),
    ]);
    let files = names
        .iter()
        .map(|n| Instant::parse_file_name(n).unwrap())
        .collect();
    let t = Timeline::from_files(files, 1, ".hoodie".into());
    let history = SelectInput {
        history: true,
        ..input(2, 3)
    };
    // six commits > 3: the oldest four go, with the clean and the rollback requested before
    // the fourth; the clean at 55 stays, however many cleans there are
    assert_eq!(
        instants_to_archive(&t, &history),
        vec![
            (ts(10), Action::Commit),
            (ts(20), Action::Commit),
            (ts(25), Action::Clean),
            (ts(30), Action::Commit),
            (ts(35), Action::Rollback),
            (ts(40), Action::Commit),
        ]
    );
    // nothing is archived without a commit to archive, however many cleans
    let mut few: Vec<String> = (1..=3).map(|i| format!("{}.commit", ts(i * 10))).collect();
    few.extend((0..5).map(|i| format!("{}.clean", ts(100 + i))));
    let files = few
        .iter()
        .map(|n| Instant::parse_file_name(n).unwrap())
        .collect();
    let t = Timeline::from_files(files, 1, ".hoodie".into());
    assert!(instants_to_archive(&t, &history).is_empty());
}
