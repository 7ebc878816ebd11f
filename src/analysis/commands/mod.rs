//! The analyses behind the commands other than `report`: `compare` (report
//! joins, regression verdicts), `diff` (the tree diff of two traces),
//! `collectives` (collectives across ranks), `fleet` and `steps` (many
//! traces, per-step figures), `replay` (replay scripts of ops), the `tree`
//! view and the `roofline` calculator.

pub mod collectives;
pub mod compare;
pub mod diff;
pub mod fleet;
pub mod replay;
pub mod roofline_calculator;
pub mod steps;
pub mod tree_view;
