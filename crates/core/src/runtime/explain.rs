//! Explanations: the rule a controller decided by and its inputs, recorded by the code that
//! made the decision ([`super::Ctx::explain`]), so the two cannot drift. The engine keeps them
//! with the reconcile's provenance ([`crate::engine::provenance`]); they are never written into
//! an API object, which stays what kube writes.

use serde::{Deserialize, Serialize};

/// One rule a controller decided by, with its inputs: recorded by the code that decided, as
/// side data of the reconcile (never written into an object).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Explanation {
    /// What was decided about: `Available`, `Progressing`, `status.replicas`, `desiredReplicas`.
    pub subject: String,
    /// The outcome, as written: `False`, `5`.
    pub value: String,
    /// The rule and its inputs: `availableReplicas 3 < minAvailable 4 (...)`.
    pub rule: String,
    /// Fields of the reconciled object the decision read, as field paths
    /// (`status.conditions[type=Progressing].lastUpdateTime`): a why-chain can follow them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<String>,
}

impl Explanation {
    pub fn new(
        subject: impl Into<String>,
        value: impl Into<String>,
        rule: impl Into<String>,
    ) -> Self {
        Explanation {
            subject: subject.into(),
            value: value.into(),
            rule: rule.into(),
            inputs: Vec::new(),
        }
    }

    /// The same, naming a field of the reconciled object the decision read.
    pub fn with_input(mut self, field: impl Into<String>) -> Self {
        self.inputs.push(field.into());
        self
    }
}

impl std::fmt::Display for Explanation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={}: {}", self.subject, self.value, self.rule)
    }
}
