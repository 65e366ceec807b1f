//! Constructors for the refusals the API server sends, with kube's exact message shapes
//! (apimachinery `pkg/api/errors/errors.go`, apiserver `responsewriters/errors.go`).

use super::types::{ApiError, GroupResource, StatusReason};
use super::validation::{go_quote, FieldError};

fn with_details(mut e: ApiError, name: &str, group: &str, kind: &str) -> ApiError {
    e.details_name = name.to_owned();
    e.details_group = group.to_owned();
    e.details_kind = kind.to_owned();
    e
}

/// `deployments.apps "web" not found`.
pub fn not_found(gr: &GroupResource, name: &str) -> ApiError {
    with_details(
        ApiError::new(
            StatusReason::NotFound,
            format!("{} {} not found", gr.qualified(), go_quote(name)),
        ),
        name,
        &gr.group,
        &gr.resource,
    )
}

/// A resource (or subresource) the server does not serve.
pub fn unknown_resource() -> ApiError {
    ApiError::new(
        StatusReason::NotFound,
        "the server could not find the requested resource",
    )
}

/// `deployments.apps "web" already exists`.
pub fn already_exists(gr: &GroupResource, name: &str) -> ApiError {
    with_details(
        ApiError::new(
            StatusReason::AlreadyExists,
            format!("{} {} already exists", gr.qualified(), go_quote(name)),
        ),
        name,
        &gr.group,
        &gr.resource,
    )
}

/// The optimistic-concurrency refusal (409).
pub fn conflict(gr: &GroupResource, name: &str) -> ApiError {
    conflict_with(
        gr,
        name,
        "the object has been modified; please apply your changes to the latest version and try again",
    )
}

/// `Operation cannot be fulfilled on <resource> "<name>": <why>`.
pub fn conflict_with(gr: &GroupResource, name: &str, why: &str) -> ApiError {
    with_details(
        ApiError::new(
            StatusReason::Conflict,
            format!(
                "Operation cannot be fulfilled on {} \"{}\": {}",
                gr.qualified(),
                name,
                why
            ),
        ),
        name,
        &gr.group,
        &gr.resource,
    )
}

/// `<resource> "<name>" is forbidden: <reason>` (or without the name for create and list).
pub fn forbidden(gr: &GroupResource, name: &str, reason: &str) -> ApiError {
    let subject = if name.is_empty() {
        gr.qualified()
    } else {
        format!("{} {}", gr.qualified(), go_quote(name))
    };
    with_details(
        ApiError::new(
            StatusReason::Forbidden,
            format!("{subject} is forbidden: {reason}"),
        ),
        name,
        &gr.group,
        &gr.resource,
    )
}

/// `Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be ...`; several
/// errors are joined as kube's aggregate does: `[a, b]`. `qualified_kind` is `Kind.group`
/// (`Pod` for the core group), or `<plural>.<group>` where kube uses the resource.
pub fn invalid(
    qualified_kind: &str,
    group: &str,
    kind: &str,
    name: &str,
    errs: &[FieldError],
) -> ApiError {
    let rendered: Vec<String> = errs.iter().map(FieldError::to_string).collect();
    let joined = match rendered.as_slice() {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    };
    let mut e = with_details(
        ApiError::new(
            StatusReason::Invalid,
            format!("{qualified_kind} {} is invalid: {joined}", go_quote(name)),
        ),
        name,
        group,
        kind,
    );
    e.causes = errs.iter().map(|f| (f.field.clone(), f.body())).collect();
    e
}

/// A malformed request (400).
pub fn bad_request(message: impl Into<String>) -> ApiError {
    ApiError::new(StatusReason::BadRequest, message)
}

/// A verb the resource does not support (405).
pub fn method_not_allowed(verb: &str, gr: &GroupResource) -> ApiError {
    with_details(
        ApiError::new(
            StatusReason::MethodNotAllowed,
            format!(
                "{verb} is not supported on resources of kind \"{}\"",
                gr.qualified()
            ),
        ),
        "",
        &gr.group,
        &gr.resource,
    )
}
