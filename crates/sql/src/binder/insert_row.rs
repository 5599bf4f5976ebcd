//! The row being inserted as a scope for INSERT ... VALUES and INSERT ... SET: MariaDB
//! lets a value name a column of the target table (`VALUES (1, a + 1)`) and call
//! `DEFAULT(col)`. A column reads the value the row holds when that value is computed:
//! the values before it in the column list, the constant defaults of the others (see
//! `executor::insert_input`).

use super::types::col_flags;
use super::*;

impl Binder<'_> {
    /// Puts the columns of `t` in scope at row positions 0..: a row of `t` for the values
    /// of an INSERT, a CHECK constraint or an expression default.
    pub(crate) fn enter_row_of(&mut self, t: &Arc<TableDef>) -> Result<(), SqlError> {
        let cols = t
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| (c.name.clone(), c.ty, c.nullable, col_flags(t, i)))
            .collect();
        let width = t.columns.len() + t.hidden_pk as usize;
        let mut sources = Vec::new();
        self.add_source(
            &mut sources,
            t.name.clone(),
            t.db.clone(),
            SourceKind::Table(t.clone()),
            cols,
            width,
            Default::default(),
        )
    }

    /// Ends the scope [`enter_row_of`](Self::enter_row_of) began.
    pub(crate) fn leave_insert_row(&mut self) {
        self.scope.clear();
        self.types.clear();
        self.star.clear();
    }
}
