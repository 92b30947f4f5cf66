//! The `hoodie.properties` changes of each version step, as Hudi's upgrade handlers make them
//! (`SevenToEightUpgradeHandler`, `EightToNineUpgradeHandler`): keys added, keys removed, the
//! rest kept as the table had them.

use crate::config::{self, COMMIT_TIME_STRATEGY_ID, DEFAULT_PAYLOAD_CLASS, EVENT_TIME_STRATEGY_ID};
use crate::config::{OVERWRITE_PAYLOAD_CLASS, TIMELINE_LAYOUT_VERSION};
use crate::error::Result;
use crate::refusal::UpgradeRefusal;
use crate::table_config::{KeyGenKind, TableConfig, TableType};

/// Hudi's `EventTimeAvroPayload`, which orders by event time as the default payload does.
const EVENT_TIME_PAYLOAD: &str = "org.apache.hudi.common.model.EventTimeAvroPayload";

/// The payload classes version 9 retires for merge modes (Hudi's RFC-97 list): a merge-on-read
/// table keeps its class as `hoodie.table.legacy.payload.class`.
const RETIRED_PAYLOADS: [&str; 8] = [
    DEFAULT_PAYLOAD_CLASS,
    OVERWRITE_PAYLOAD_CLASS,
    EVENT_TIME_PAYLOAD,
    "org.apache.hudi.common.model.AWSDmsAvroPayload",
    "org.apache.hudi.common.model.OverwriteNonDefaultsWithLatestAvroPayload",
    "org.apache.hudi.common.model.PartialUpdateAvroPayload",
    "org.apache.hudi.common.model.debezium.MySqlDebeziumAvroPayload",
    "org.apache.hudi.common.model.debezium.PostgresDebeziumAvroPayload",
];

/// The merge strategies Hudi builds in (a custom one is left as it is by the step to 9).
const BUILTIN_STRATEGIES: [&str; 4] = [
    EVENT_TIME_STRATEGY_ID,
    COMMIT_TIME_STRATEGY_ID,
    "1897ef5f-18bc-4557-939c-9d6a8afd1519",
    "00000000-0000-0000-0000-000000000000",
];

/// The properties of version 8 from those of version 6: the layout-2 timeline folder, the
/// initial version, the key generator's type, and the merge mode with its strategy and payload
/// (by the payload class and the ordering field, as Java derives them).
pub(super) fn six_to_eight(from: &TableConfig) -> Result<TableConfig> {
    let mut to = from.clone();
    to.set(config::TABLE_VERSION.key, "8");
    to.set(TIMELINE_LAYOUT_VERSION.key, "2");
    to.set(config::TIMELINE_PATH.key, "timeline");
    to.set(config::INITIAL_VERSION.key, from.version()?.to_string());
    if let Some(class) = from.get(&config::KEYGEN_CLASS).map(str::to_string) {
        if let Some(kind) = KeyGenKind::from_class_or_type(&class) {
            to.set(config::KEYGEN_TYPE.key, kind.type_name());
        }
        to.set(config::KEYGEN_CLASS.key, class);
    }
    let payload = from.get(&config::PAYLOAD_CLASS).map(str::to_string);
    let known = [
        DEFAULT_PAYLOAD_CLASS,
        EVENT_TIME_PAYLOAD,
        OVERWRITE_PAYLOAD_CLASS,
    ];
    if let Some(class) = payload.as_ref().filter(|p| !known.contains(&p.as_str())) {
        return Err(UpgradeRefusal::CustomPayload {
            class: class.clone(),
        }
        .into());
    }
    let event_time = match payload.as_deref() {
        // a merge-on-read table with an ordering field orders by it whatever its payload
        _ if from.table_type()? == TableType::MergeOnRead && from.ordering_field().is_some() => {
            true
        }
        Some(p) => p == DEFAULT_PAYLOAD_CLASS || p == EVENT_TIME_PAYLOAD,
        None => false,
    };
    let (mode, strategy, class) = match event_time {
        true => (
            "EVENT_TIME_ORDERING",
            EVENT_TIME_STRATEGY_ID,
            DEFAULT_PAYLOAD_CLASS,
        ),
        false => (
            "COMMIT_TIME_ORDERING",
            COMMIT_TIME_STRATEGY_ID,
            OVERWRITE_PAYLOAD_CLASS,
        ),
    };
    to.set(config::RECORD_MERGE_MODE.key, mode);
    to.set(config::RECORD_MERGE_STRATEGY_ID.key, strategy);
    to.set(config::PAYLOAD_CLASS.key, class);
    TableConfig::from_properties(to.properties().clone())
}

/// The properties of version 9 from those of version 8, as Hudi 1.2's upgrade leaves them: a
/// payload class Hudi retired for merge modes moves to `hoodie.table.legacy.payload.class`, and
/// the ordering field is recorded as `hoodie.table.ordering.fields`.
pub(super) fn eight_to_nine(from: &TableConfig) -> Result<TableConfig> {
    let mut props = from.properties().clone();
    props.set(config::TABLE_VERSION.key, "9");
    let payload = from.get(&config::PAYLOAD_CLASS).map(str::to_string);
    let strategy = from.get(&config::RECORD_MERGE_STRATEGY_ID);
    let builtin = strategy.is_none_or(|s| BUILTIN_STRATEGIES.contains(&s));
    if let Some(p) = payload.filter(|p| builtin && RETIRED_PAYLOADS.contains(&p.as_str())) {
        props.set(config::LEGACY_PAYLOAD_CLASS.key, p);
        for key in [config::PAYLOAD_CLASS.key]
            .into_iter()
            .chain(config::PAYLOAD_CLASS.aliases.iter().copied())
        {
            props.remove(key);
        }
    }
    if let Some(ordering) = from.get(&config::ORDERING_FIELDS).map(str::to_string) {
        for alias in config::ORDERING_FIELDS.aliases {
            props.remove(alias);
        }
        props.set(config::ORDERING_FIELDS.key, ordering);
    }
    TableConfig::from_properties(props)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::new_table::NewTable;
    use crate::table_config::MergeMode;
    use arrow::datatypes::{DataType, Field, Schema};

    fn v6(table_type: TableType, ordering: Option<&str>, mode: MergeMode) -> TableConfig {
        super::super::test_config(6, table_type, ordering, mode, true)
    }

    fn get<'a>(c: &'a TableConfig, key: &str) -> Option<&'a str> {
        c.properties().get(key)
    }

    #[test]
    fn six_to_eight_records_layout_keygen_type_and_merge_mode() {
        let from = v6(
            TableType::CopyOnWrite,
            Some("ts"),
            MergeMode::EventTimeOrdering,
        );
        let to = six_to_eight(&from).unwrap();
        assert_eq!(to.version().unwrap(), 8);
        assert_eq!(to.timeline_layout_version().unwrap(), 2);
        assert_eq!(to.timeline_dir().unwrap(), ".hoodie/timeline");
        assert_eq!(get(&to, "hoodie.table.initial.version"), Some("6"));
        assert_eq!(get(&to, "hoodie.table.keygenerator.type"), Some("SIMPLE"));
        assert_eq!(
            get(&to, "hoodie.table.keygenerator.class"),
            Some("org.apache.hudi.keygen.SimpleKeyGenerator")
        );
        assert_eq!(
            get(&to, "hoodie.record.merge.mode"),
            Some("EVENT_TIME_ORDERING")
        );
        assert_eq!(
            get(&to, "hoodie.compaction.record.merger.strategy"),
            Some(EVENT_TIME_STRATEGY_ID)
        );
        assert_eq!(to.ordering_field().as_deref(), Some("ts"));
        assert_eq!(to.merge_mode().unwrap(), MergeMode::EventTimeOrdering);
        // commit-time ordering keeps its payload and gets its strategy
        let from = v6(TableType::CopyOnWrite, None, MergeMode::CommitTimeOrdering);
        let to = six_to_eight(&from).unwrap();
        assert_eq!(
            get(&to, "hoodie.record.merge.mode"),
            Some("COMMIT_TIME_ORDERING")
        );
        assert_eq!(
            get(&to, "hoodie.compaction.payload.class"),
            Some(OVERWRITE_PAYLOAD_CLASS)
        );
    }

    #[test]
    fn eight_to_nine_retires_the_payload_class_and_names_the_ordering_field() {
        for table_type in [TableType::MergeOnRead, TableType::CopyOnWrite] {
            let from = v6(table_type, Some("ts"), MergeMode::EventTimeOrdering);
            let nine = eight_to_nine(&six_to_eight(&from).unwrap()).unwrap();
            assert_eq!(nine.version().unwrap(), 9);
            assert_eq!(
                get(&nine, "hoodie.table.legacy.payload.class"),
                Some(DEFAULT_PAYLOAD_CLASS)
            );
            assert_eq!(get(&nine, "hoodie.compaction.payload.class"), None);
            assert_eq!(get(&nine, "hoodie.table.precombine.field"), None);
            assert_eq!(get(&nine, "hoodie.table.ordering.fields"), Some("ts"));
            assert_eq!(
                get(&nine, "hoodie.compaction.record.merger.strategy"),
                Some(EVENT_TIME_STRATEGY_ID)
            );
            assert_eq!(nine.merge_mode().unwrap(), MergeMode::EventTimeOrdering);
        }
        // commit-time ordering without an ordering field
        let from = v6(TableType::CopyOnWrite, None, MergeMode::CommitTimeOrdering);
        let nine = eight_to_nine(&six_to_eight(&from).unwrap()).unwrap();
        assert_eq!(nine.merge_mode().unwrap(), MergeMode::CommitTimeOrdering);
        assert_eq!(
            get(&nine, "hoodie.table.legacy.payload.class"),
            Some(OVERWRITE_PAYLOAD_CLASS)
        );
        assert_eq!(get(&nine, "hoodie.table.ordering.fields"), None);
    }

    #[test]
    fn a_composite_key_records_the_complex_type() {
        let columns = Schema::new(vec![
            Field::new("id", DataType::Int32, false),
            Field::new("Region", DataType::Utf8, false),
        ]);
        let mut new = NewTable::new("t", columns);
        new.version = 6;
        new.record_keys = vec!["id".into(), "Region".into()];
        let from = TableConfig::from_properties(new.properties().unwrap()).unwrap();
        let nine = eight_to_nine(&six_to_eight(&from).unwrap()).unwrap();
        assert_eq!(
            get(&nine, "hoodie.table.keygenerator.type"),
            Some("COMPLEX")
        );
        assert_eq!(nine.record_key_fields(), ["id", "Region"]);
        assert_eq!(nine.merge_mode().unwrap(), MergeMode::CommitTimeOrdering);
    }
}
