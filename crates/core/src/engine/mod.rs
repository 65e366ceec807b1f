//! The deterministic reconciliation engine: clock, event queue, informers, work queues, steps.
