//! Downgrading a table, as Hudi 1.2's `downgrade_table` and its downgrade handlers do
//! (`NineToEightDowngradeHandler`, `EightToSevenDowngradeHandler`): 9 to 8 changes
//! `hoodie.properties` alone (the payload class and the precombine field back under their
//! version 8 names, the merge strategy recorded); 8 to 6 moves the timeline back to layout 1
//! (see [`super::timeline::copy_to_layout_1`]) and drops the merge mode. The LSM history stays
//! where it is, as Hudi leaves it: a reader of version 6 sees none of the archived instants.
//!
//! The properties were checked against Spark with Hudi 1.2.0's downgrades of tables hoodie
//! wrote (created at 9, and upgraded from 6; copy-on-write and merge-on-read; both orderings).

use crate::config::{
    self, COMMIT_TIME_STRATEGY_ID, EVENT_TIME_STRATEGY_ID, TIMELINE_LAYOUT_VERSION,
};
use crate::error::Result;
use crate::table_config::{KeyGenKind, MergeMode, TableConfig};

/// Hudi 1.x's key of the merge strategy, which version 8 records beside the older
/// `hoodie.compaction.record.merger.strategy` and version 6 drops.
const MERGE_STRATEGY_ID: &str = "hoodie.record.merge.strategy.id";

/// The merge strategy of a merge mode.
fn strategy_of(mode: MergeMode) -> &'static str {
    match mode {
        MergeMode::EventTimeOrdering => EVENT_TIME_STRATEGY_ID,
        MergeMode::CommitTimeOrdering => COMMIT_TIME_STRATEGY_ID,
    }
}

/// Moves the value of `from` (if any) to `to`.
fn rename(props: &mut crate::properties::Properties, from: &str, to: &str) {
    if let Some(v) = props.remove(from) {
        props.set(to, v);
    }
}

/// The properties of version 8 from those of version 9: the merge strategy of the merge mode
/// recorded under both its keys (an existing `hoodie.compaction.record.merger.strategy` kept),
/// a legacy payload class back as `hoodie.compaction.payload.class`, the ordering field as
/// `hoodie.table.precombine.field`.
pub(super) fn nine_to_eight(from: &TableConfig) -> Result<TableConfig> {
    let strategy = strategy_of(from.merge_mode()?);
    let mut props = from.properties().clone();
    props.set(config::TABLE_VERSION.key, "8");
    props.set(MERGE_STRATEGY_ID, strategy);
    if props.get(config::RECORD_MERGE_STRATEGY_ID.key).is_none() {
        props.set(config::RECORD_MERGE_STRATEGY_ID.key, strategy);
    }
    rename(
        &mut props,
        config::LEGACY_PAYLOAD_CLASS.key,
        config::PAYLOAD_CLASS.key,
    );
    rename(
        &mut props,
        config::ORDERING_FIELDS.key,
        config::ORDERING_FIELDS.aliases[0],
    );
    TableConfig::from_properties(props)
}

/// The properties of version 6 from those of version 8: layout 1, the key generator's class
/// (from its type), no merge mode (a reader of version 6 takes it from the payload class, the
/// merge strategy or the precombine field). The other version 8 keys stay, as Hudi leaves them.
pub(super) fn eight_to_six(from: &TableConfig) -> Result<TableConfig> {
    let mut props = from.properties().clone();
    props.set(config::TABLE_VERSION.key, "6");
    props.set(TIMELINE_LAYOUT_VERSION.key, "1");
    props.remove(config::RECORD_MERGE_MODE.key);
    props.remove(MERGE_STRATEGY_ID);
    rename(
        &mut props,
        config::ORDERING_FIELDS.key,
        config::ORDERING_FIELDS.aliases[0],
    );
    if props.get(config::KEYGEN_CLASS.key).is_none() {
        if let Some(kind) = from
            .get(&config::KEYGEN_TYPE)
            .and_then(KeyGenKind::from_class_or_type)
        {
            props.set(config::KEYGEN_CLASS.key, kind.class_name());
        }
    }
    TableConfig::from_properties(props)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table_config::TableType;

    fn v9(ordering: Option<&str>, mode: MergeMode, partitioned: bool) -> TableConfig {
        super::super::test_config(9, TableType::MergeOnRead, ordering, mode, partitioned)
    }

    fn get<'a>(c: &'a TableConfig, key: &str) -> Option<&'a str> {
        c.properties().get(key)
    }

    /// As Spark with Hudi 1.2.0 downgrades an event-time table created at version 9.
    #[test]
    fn event_time_table_to_eight_then_six() {
        let nine = v9(Some("ts"), MergeMode::EventTimeOrdering, false);
        let eight = nine_to_eight(&nine).unwrap();
        assert_eq!(get(&eight, "hoodie.table.version"), Some("8"));
        assert_eq!(get(&eight, MERGE_STRATEGY_ID), Some(EVENT_TIME_STRATEGY_ID));
        assert_eq!(
            get(&eight, "hoodie.compaction.record.merger.strategy"),
            Some(EVENT_TIME_STRATEGY_ID)
        );
        assert_eq!(get(&eight, "hoodie.table.precombine.field"), Some("ts"));
        assert_eq!(get(&eight, "hoodie.table.ordering.fields"), None);
        assert_eq!(
            get(&eight, "hoodie.record.merge.mode"),
            Some("EVENT_TIME_ORDERING")
        );
        let six = eight_to_six(&eight).unwrap();
        assert_eq!(get(&six, "hoodie.table.version"), Some("6"));
        assert_eq!(get(&six, "hoodie.timeline.layout.version"), Some("1"));
        assert_eq!(get(&six, "hoodie.record.merge.mode"), None);
        assert_eq!(get(&six, MERGE_STRATEGY_ID), None);
        assert_eq!(
            get(&six, "hoodie.table.keygenerator.class"),
            Some("org.apache.hudi.keygen.NonpartitionedKeyGenerator")
        );
        // kept, as Hudi keeps them
        for key in [
            "hoodie.table.keygenerator.type",
            "hoodie.table.initial.version",
            "hoodie.timeline.path",
            "hoodie.compaction.record.merger.strategy",
        ] {
            assert!(get(&six, key).is_some(), "{key}");
        }
        assert_eq!(six.merge_mode().unwrap(), MergeMode::EventTimeOrdering);
    }

    /// A table upgraded from 6 gets its payload class back; a commit-time table keeps reading
    /// as commit-time ordered on 6 by its merge strategy.
    #[test]
    fn legacy_payload_and_commit_time_ordering_come_back() {
        let mut props = v9(Some("ts"), MergeMode::CommitTimeOrdering, true)
            .properties()
            .clone();
        props.set(
            config::LEGACY_PAYLOAD_CLASS.key,
            config::OVERWRITE_PAYLOAD_CLASS,
        );
        let nine = TableConfig::from_properties(props).unwrap();
        let eight = nine_to_eight(&nine).unwrap();
        assert_eq!(
            get(&eight, "hoodie.compaction.payload.class"),
            Some(config::OVERWRITE_PAYLOAD_CLASS)
        );
        assert_eq!(get(&eight, "hoodie.table.legacy.payload.class"), None);
        assert_eq!(
            get(&eight, MERGE_STRATEGY_ID),
            Some(COMMIT_TIME_STRATEGY_ID)
        );
        let six = eight_to_six(&eight).unwrap();
        assert_eq!(
            get(&six, "hoodie.table.keygenerator.class"),
            Some("org.apache.hudi.keygen.SimpleKeyGenerator")
        );
        assert_eq!(six.merge_mode().unwrap(), MergeMode::CommitTimeOrdering);
        let mut bare = six.properties().clone();
        bare.remove("hoodie.compaction.payload.class");
        let bare = TableConfig::from_properties(bare).unwrap();
        assert_eq!(bare.merge_mode().unwrap(), MergeMode::CommitTimeOrdering);
    }
}
