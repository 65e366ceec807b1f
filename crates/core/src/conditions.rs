//! metav1.Condition helpers with apimachinery's `SetStatusCondition` semantics.
