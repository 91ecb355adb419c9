"""Pure rules engines: state, actions and events, with no I/O, no clock and no global RNG."""
