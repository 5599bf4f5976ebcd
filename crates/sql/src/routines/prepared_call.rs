//! CALL run as a prepared statement, whose OUT and INOUT arguments may be `?`
//! placeholders (MariaDB): through COM_STMT_EXECUTE their final values go to the client as
//! one extra binary result set (flagged SERVER_PS_OUT_PARAMS) before the final OK packet;
//! through `EXECUTE ... USING` they go to the user variables given for them, and a value
//! that is not a user variable there is error 1414.

use onelog_types::Value;

use super::compile::Target;
use super::parse::{Mode, Param};
use crate::{QueryResult, ResultColumn, SqlError};

/// Where the OUT values of a prepared CALL's `?` arguments go.
#[derive(Debug, Clone)]
pub(crate) enum CallOut {
    /// COM_STMT_EXECUTE: to the client, as the OUT parameters result set.
    Protocol,
    /// `EXECUTE ... USING`: the user variable named by each USING argument (None: the
    /// argument is not a user variable).
    UserVars(Vec<Option<String>>),
}

impl CallOut {
    /// The target of the argument that is the bare placeholder `param` (0-based).
    pub(crate) fn target(&self, param: usize) -> Option<Target> {
        match self {
            CallOut::Protocol => Some(Target::Param),
            CallOut::UserVars(vars) => vars.get(param).cloned().flatten().map(Target::User),
        }
    }
}

/// Whether an argument of CALL, as written, is a bare `?` placeholder.
pub(crate) fn is_placeholder(arg: &str) -> bool {
    arg.trim() == "?"
}

/// The OUT parameters result set of a CALL through COM_STMT_EXECUTE: a column per OUT or
/// INOUT parameter whose argument is a `?`, named and typed as the parameter is declared,
/// and one row of their final values. None when no such argument exists.
pub(crate) fn out_params_result(
    params: &[Param],
    targets: &[Option<Target>],
    values: &[Value],
) -> Result<Option<QueryResult>, SqlError> {
    let mut columns = Vec::new();
    let mut row = Vec::new();
    for ((p, t), v) in params.iter().zip(targets).zip(values) {
        if p.mode == Mode::In || !matches!(t, Some(Target::Param)) {
            continue;
        }
        let ty = super::compile::type_of_text(&p.ty)?;
        row.push(super::convert(v.clone(), &ty));
        columns.push(ResultColumn::expr(p.name.clone(), ty, true));
    }
    if columns.is_empty() {
        return Ok(None);
    }
    Ok(Some(QueryResult::Rows {
        columns,
        rows: vec![row],
    }))
}
