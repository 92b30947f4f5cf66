//! Which names a table of the warehouse may have. A managed table's name is its folder's name
//! in the warehouse, so a name that is not one plain folder name (empty, `.`, `..`, a path
//! separator, a control character) would put the table in the warehouse itself, above it or
//! below another folder, and `DROP TABLE ... PURGE` would then delete that folder.

use crate::error::{HoodieError, Result};

/// Why `name` cannot name a table or database, or `None` when it can.
pub fn name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("it is empty")
    } else if name == "." || name == ".." {
        Some("`.` and `..` name the warehouse folder or its parent")
    } else if name.contains(['/', '\\']) {
        Some("it holds a path separator (`/` or `\\`)")
    } else if name.chars().any(char::is_control) {
        Some("it holds a control character")
    } else if name.trim() != name {
        Some("it starts or ends with white space")
    } else {
        None
    }
}

/// Refuses a name `name_problem` finds a problem with: `kind` is "table" or "database".
pub fn check_name(kind: &'static str, name: &str) -> Result<()> {
    match name_problem(name) {
        None => Ok(()),
        Some(reason) => Err(HoodieError::InvalidName {
            kind,
            name: name.escape_debug().to_string(),
            reason,
        }),
    }
}

/// Refuses a table name (`db.t` or `t`) whose parts `name_problem` finds a problem with. The
/// name is split at its last `.`, as [`crate::frontend::name_of`] joins the parts.
pub fn check_table_name(name: &str) -> Result<()> {
    match name.rsplit_once('.') {
        // `..` itself, or a name ending in `.`, is checked whole: its parts would be empty
        Some((db, table)) if !db.is_empty() && !table.is_empty() => {
            check_name("database", db)?;
            check_name("table", table)
        }
        _ => check_name("table", name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_names_that_are_not_one_folder() {
        for bad in [
            "", ".", "..", "a/b", "/", "a\\b", "tab\tle", "nul\0", " t", "t ",
        ] {
            let err = check_table_name(bad).expect_err(bad).to_string();
            assert!(err.contains("is not a valid table name"), "{bad:?}: {err}");
        }
        let err = check_table_name("x/y.t").unwrap_err().to_string();
        assert!(err.contains("database name"), "{err}");
        for good in ["t", "Mixed_Case", "a-b", "ünïcode", "db.t", "with space"] {
            check_table_name(good).expect(good);
        }
    }
}
