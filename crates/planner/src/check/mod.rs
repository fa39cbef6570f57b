//! The planner checked: against AWS's published figures (`fidelity`) and
//! against traces its defaults were not chosen on (`held_out`).

pub mod fidelity;
pub mod held_out;
