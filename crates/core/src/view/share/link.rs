//! The share-link format, version 1: the saved and shared session written with its own serde
//! types, so renaming or reshaping an engine, API or view type cannot silently change what old
//! links and saves hold. Every conversion to and from the engine's `Input`/`ApiRequest`, the
//! playground's `SessionAction` and the `Workspace` is an explicit, exhaustive `match` here:
//! a new engine input fails to compile until this file says how links write it.
//!
//! Version 1 is the JSON the first links were made of (before these types existed, it was the
//! engine types' own serde form); `tests/fixtures/share/` pins it byte for byte, with the
//! messages damaged saves give. serde's derive writes the Rust type's name into some messages
//! ("expected struct ApiRequest", "tuple variant RequestBody::Patch"), so each type here keeps
//! the variant names of the type it was written from and says the old name in
//! `#[serde(expecting)]`, and `RequestBodyV1` is read by hand. One difference is left: a value
//! written as an array where an object belongs (serde accepts `["apply", ...]` for a struct or
//! a tagged enum; Converge never wrote one) names the type without its variant and field count.
//!
//! A version 2 would add its own types beside these and a conversion from version 1.

use crate::json::Value;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Target, Theme, Workspace};
use crate::api::{ApiRequest, GroupResource, ObjectKey, PatchType, RequestBody, Subresource, Verb};
use crate::controllers::ImageBehaviour;
use crate::engine::{Fault, Input};
use crate::view::session::{SessionAction, Starter};
use crate::view::Syntax;

/// A saved workspace: the localStorage JSON and, deflated, the share link's payload.
#[derive(Serialize, Deserialize)]
#[serde(rename = "Workspace", expecting = "struct Workspace")]
pub struct WorkspaceV1 {
    pub v: u32,
    pub starter: StarterV1,
    pub seed: u64,
    pub actions: Vec<ActionV1>,
    pub cursor: Option<u64>,
    pub selected: Option<ObjectKeyV1>,
    pub editor_text: String,
    pub syntax: SyntaxV1,
    pub principal: String,
    pub target: TargetV1,
    pub theme: ThemeV1,
    pub speed: usize,
}

#[derive(Serialize, Deserialize)]
#[serde(
    rename = "Starter",
    expecting = "enum Starter",
    rename_all = "camelCase"
)]
pub enum StarterV1 {
    Small,
    Large,
}

#[derive(Serialize, Deserialize)]
#[serde(rename = "Syntax", expecting = "enum Syntax")]
pub enum SyntaxV1 {
    Json,
    Yaml,
}

#[derive(Serialize, Deserialize)]
#[serde(rename = "Target", expecting = "enum Target")]
pub enum TargetV1 {
    Main,
    Status,
}

#[derive(Serialize, Deserialize)]
#[serde(rename = "Theme", expecting = "enum Theme")]
pub enum ThemeV1 {
    System,
    Light,
    Dark,
}

#[derive(Serialize, Deserialize)]
#[serde(rename = "ObjectKey", expecting = "struct ObjectKey")]
pub struct ObjectKeyV1 {
    pub gr: GroupResourceV1,
    pub namespace: String,
    pub name: String,
}

#[derive(Serialize, Deserialize)]
#[serde(rename = "GroupResource", expecting = "struct GroupResource")]
pub struct GroupResourceV1 {
    pub group: String,
    pub resource: String,
}

/// One logged playground action.
#[derive(Serialize, Deserialize)]
#[serde(
    rename = "SessionAction",
    expecting = "internally tagged enum SessionAction",
    tag = "a",
    rename_all = "camelCase"
)]
#[allow(
    clippy::large_enum_variant,
    reason = "a transient form between the log and its JSON; boxing would only obscure it"
)]
pub enum ActionV1 {
    Step,
    NextEvent,
    RunUntilConverged,
    Apply {
        input: InputV1,
        /// The terminal command that sent the request. Added after format v1 was first written;
        /// absent when None, so the actions the editor and the faults log read and write as
        /// they always did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        command: Option<String>,
    },
}

/// A user request, fault or setting applied now.
#[derive(Serialize, Deserialize)]
#[serde(
    rename = "Input",
    expecting = "internally tagged enum Input",
    tag = "input",
    rename_all = "camelCase"
)]
pub enum InputV1 {
    Request {
        request: RequestV1,
    },
    Advance {
        ms: u64,
    },
    Fault {
        fault: FaultV1,
    },
    SetLoad {
        target: String,
        millicores: u64,
    },
    SetImage {
        image: String,
        behaviour: ImageBehaviourV1,
    },
    SetRbac {
        enforced: bool,
    },
}

#[derive(Serialize, Deserialize)]
#[serde(rename = "ApiRequest", expecting = "struct ApiRequest")]
pub struct RequestV1 {
    pub principal: String,
    pub verb: VerbV1,
    pub gr: GroupResourceV1,
    pub namespace: String,
    pub name: String,
    pub subresource: Option<SubresourceV1>,
    pub body: RequestBodyV1,
    pub label_selector: Option<String>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename = "Verb", expecting = "enum Verb", rename_all = "lowercase")]
pub enum VerbV1 {
    Get,
    List,
    Create,
    Update,
    Patch,
    Delete,
}

#[derive(Serialize, Deserialize)]
#[serde(
    rename = "Subresource",
    expecting = "enum Subresource",
    rename_all = "lowercase"
)]
pub enum SubresourceV1 {
    Status,
    /// Added after format v1 was first written (by `converge serve`); older links never hold it.
    Scale,
}

/// Deserialized by hand (below): serde's derive would name this type, not `RequestBody`, in
/// the message for a short `Patch` pair.
#[derive(Serialize)]
#[serde(rename = "RequestBody")]
pub enum RequestBodyV1 {
    None,
    Object(Value),
    Patch(PatchTypeV1, Value),
}

#[derive(Serialize, Deserialize)]
#[serde(rename = "PatchType", expecting = "enum PatchType")]
pub enum PatchTypeV1 {
    #[serde(rename = "merge")]
    Merge,
    #[serde(rename = "json")]
    Json,
    /// Added after format v1 was first written (by `converge serve`); older links never hold it.
    #[serde(rename = "strategic")]
    Strategic,
}

#[derive(Serialize, Deserialize)]
#[serde(
    rename = "Fault",
    expecting = "internally tagged enum Fault",
    tag = "fault",
    rename_all = "camelCase"
)]
pub enum FaultV1 {
    PauseController {
        controller: String,
    },
    ResumeController {
        controller: String,
    },
    CrashController {
        controller: String,
    },
    RestartController {
        controller: String,
    },
    WatchLatency {
        controller: Option<String>,
        ms: u64,
    },
    ApiFailures {
        principal: Option<String>,
        count: u32,
        code: u16,
    },
    ClearApiFailures,
    ImagePullFailure {
        node: String,
        failing: bool,
    },
    /// Added within v1: older links never carry it.
    AddNode {
        node: NodeV1,
    },
    /// Added within v1.
    RemoveNode {
        node: String,
    },
}

/// A joining node in a link: the engine's `NodeSpec`.
#[derive(Serialize, Deserialize)]
#[serde(rename = "Node", rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeV1 {
    pub name: String,
    pub cpu: String,
    pub memory: String,
    pub pods: u64,
}

#[derive(Serialize, Deserialize)]
#[serde(
    rename = "ImageBehaviour",
    expecting = "internally tagged enum ImageBehaviour",
    tag = "behaviour",
    rename_all = "camelCase"
)]
pub enum ImageBehaviourV1 {
    Ok { pull_ms: u64 },
    PullFails,
    Crashes { run_ms: u64 },
    Completes { run_ms: u64 },
    ProbeFails,
}

/// The variant names of [`RequestBodyV1`], as its derived form would read them.
#[derive(Deserialize)]
#[serde(variant_identifier)]
enum RequestBodyTagV1 {
    None,
    Object,
    Patch,
}

impl<'de> Deserialize<'de> for RequestBodyV1 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{EnumAccess, Error, SeqAccess, VariantAccess, Visitor};
        use std::fmt;

        const VARIANTS: &[&str] = &["None", "Object", "Patch"];
        const PATCH: &str = "tuple variant RequestBody::Patch with 2 elements";

        struct Body;
        impl<'de> Visitor<'de> for Body {
            type Value = RequestBodyV1;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("enum RequestBody")
            }
            fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Self::Value, A::Error> {
                match data.variant()? {
                    (RequestBodyTagV1::None, v) => v.unit_variant().map(|()| RequestBodyV1::None),
                    (RequestBodyTagV1::Object, v) => v.newtype_variant().map(RequestBodyV1::Object),
                    (RequestBodyTagV1::Patch, v) => v.tuple_variant(2, Patch),
                }
            }
        }

        struct Patch;
        impl<'de> Visitor<'de> for Patch {
            type Value = RequestBodyV1;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("tuple variant RequestBody::Patch")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let Some(patch_type) = seq.next_element()? else {
                    return Err(Error::invalid_length(0, &PATCH));
                };
                let Some(patch) = seq.next_element()? else {
                    return Err(Error::invalid_length(1, &PATCH));
                };
                Ok(RequestBodyV1::Patch(patch_type, patch))
            }
        }

        d.deserialize_enum("RequestBody", VARIANTS, Body)
    }
}

// ---- the workspace and its preferences ------------------------------------------------------

impl From<&Workspace> for WorkspaceV1 {
    fn from(w: &Workspace) -> Self {
        WorkspaceV1 {
            v: w.v,
            starter: w.starter.into(),
            seed: w.seed,
            actions: w.actions.iter().map(ActionV1::from).collect(),
            cursor: w.cursor,
            selected: w.selected.as_ref().map(ObjectKeyV1::from),
            editor_text: w.editor_text.clone(),
            syntax: w.syntax.into(),
            principal: w.principal.clone(),
            target: w.target.into(),
            theme: w.theme.into(),
            speed: w.speed,
        }
    }
}

impl From<WorkspaceV1> for Workspace {
    fn from(w: WorkspaceV1) -> Self {
        Workspace {
            v: w.v,
            starter: w.starter.into(),
            seed: w.seed,
            actions: w.actions.into_iter().map(SessionAction::from).collect(),
            cursor: w.cursor,
            selected: w.selected.map(ObjectKey::from),
            editor_text: w.editor_text,
            syntax: w.syntax.into(),
            principal: w.principal,
            target: w.target.into(),
            theme: w.theme.into(),
            speed: w.speed,
        }
    }
}

impl From<Starter> for StarterV1 {
    fn from(s: Starter) -> Self {
        match s {
            Starter::Small => StarterV1::Small,
            Starter::Large => StarterV1::Large,
        }
    }
}

impl From<StarterV1> for Starter {
    fn from(s: StarterV1) -> Self {
        match s {
            StarterV1::Small => Starter::Small,
            StarterV1::Large => Starter::Large,
        }
    }
}

impl From<Syntax> for SyntaxV1 {
    fn from(s: Syntax) -> Self {
        match s {
            Syntax::Json => SyntaxV1::Json,
            Syntax::Yaml => SyntaxV1::Yaml,
        }
    }
}

impl From<SyntaxV1> for Syntax {
    fn from(s: SyntaxV1) -> Self {
        match s {
            SyntaxV1::Json => Syntax::Json,
            SyntaxV1::Yaml => Syntax::Yaml,
        }
    }
}

impl From<Target> for TargetV1 {
    fn from(t: Target) -> Self {
        match t {
            Target::Main => TargetV1::Main,
            Target::Status => TargetV1::Status,
        }
    }
}

impl From<TargetV1> for Target {
    fn from(t: TargetV1) -> Self {
        match t {
            TargetV1::Main => Target::Main,
            TargetV1::Status => Target::Status,
        }
    }
}

impl From<Theme> for ThemeV1 {
    fn from(t: Theme) -> Self {
        match t {
            Theme::System => ThemeV1::System,
            Theme::Light => ThemeV1::Light,
            Theme::Dark => ThemeV1::Dark,
        }
    }
}

impl From<ThemeV1> for Theme {
    fn from(t: ThemeV1) -> Self {
        match t {
            ThemeV1::System => Theme::System,
            ThemeV1::Light => Theme::Light,
            ThemeV1::Dark => Theme::Dark,
        }
    }
}

impl From<&ObjectKey> for ObjectKeyV1 {
    fn from(k: &ObjectKey) -> Self {
        ObjectKeyV1 {
            gr: (&k.gr).into(),
            namespace: k.namespace.to_string(),
            name: k.name.to_string(),
        }
    }
}

impl From<ObjectKeyV1> for ObjectKey {
    fn from(k: ObjectKeyV1) -> Self {
        ObjectKey {
            gr: k.gr.into(),
            namespace: k.namespace.into(),
            name: k.name.into(),
        }
    }
}

impl From<&GroupResource> for GroupResourceV1 {
    fn from(gr: &GroupResource) -> Self {
        GroupResourceV1 {
            group: gr.group.to_string(),
            resource: gr.resource.to_string(),
        }
    }
}

impl From<GroupResourceV1> for GroupResource {
    fn from(gr: GroupResourceV1) -> Self {
        GroupResource::new(&gr.group, &gr.resource)
    }
}

// ---- the action log -------------------------------------------------------------------------

impl From<&SessionAction> for ActionV1 {
    fn from(a: &SessionAction) -> Self {
        match a {
            SessionAction::Step => ActionV1::Step,
            SessionAction::NextEvent => ActionV1::NextEvent,
            SessionAction::RunUntilConverged => ActionV1::RunUntilConverged,
            SessionAction::Apply { input, command } => ActionV1::Apply {
                input: input.into(),
                command: command.clone(),
            },
        }
    }
}

impl From<ActionV1> for SessionAction {
    fn from(a: ActionV1) -> Self {
        match a {
            ActionV1::Step => SessionAction::Step,
            ActionV1::NextEvent => SessionAction::NextEvent,
            ActionV1::RunUntilConverged => SessionAction::RunUntilConverged,
            ActionV1::Apply { input, command } => SessionAction::Apply {
                input: input.into(),
                command,
            },
        }
    }
}

impl From<&Input> for InputV1 {
    fn from(i: &Input) -> Self {
        match i {
            Input::Request { request } => InputV1::Request {
                request: request.into(),
            },
            Input::Advance { ms } => InputV1::Advance { ms: *ms },
            Input::Fault { fault } => InputV1::Fault {
                fault: fault.into(),
            },
            Input::SetLoad { target, millicores } => InputV1::SetLoad {
                target: target.clone(),
                millicores: *millicores,
            },
            Input::SetImage { image, behaviour } => InputV1::SetImage {
                image: image.clone(),
                behaviour: behaviour.into(),
            },
            Input::SetRbac { enforced } => InputV1::SetRbac {
                enforced: *enforced,
            },
        }
    }
}

impl From<InputV1> for Input {
    fn from(i: InputV1) -> Self {
        match i {
            InputV1::Request { request } => Input::Request {
                request: request.into(),
            },
            InputV1::Advance { ms } => Input::Advance { ms },
            InputV1::Fault { fault } => Input::Fault {
                fault: fault.into(),
            },
            InputV1::SetLoad { target, millicores } => Input::SetLoad { target, millicores },
            InputV1::SetImage { image, behaviour } => Input::SetImage {
                image,
                behaviour: behaviour.into(),
            },
            InputV1::SetRbac { enforced } => Input::SetRbac { enforced },
        }
    }
}

// ---- API requests ---------------------------------------------------------------------------

impl From<&ApiRequest> for RequestV1 {
    fn from(r: &ApiRequest) -> Self {
        RequestV1 {
            principal: r.principal.clone(),
            verb: r.verb.into(),
            gr: (&r.gr).into(),
            namespace: r.namespace.clone(),
            name: r.name.clone(),
            subresource: r.subresource.map(SubresourceV1::from),
            body: (&r.body).into(),
            label_selector: r.label_selector.clone(),
        }
    }
}

impl From<RequestV1> for ApiRequest {
    fn from(r: RequestV1) -> Self {
        ApiRequest {
            principal: r.principal,
            verb: r.verb.into(),
            gr: r.gr.into(),
            namespace: r.namespace,
            name: r.name,
            subresource: r.subresource.map(Subresource::from),
            body: r.body.into(),
            label_selector: r.label_selector,
        }
    }
}

impl From<Verb> for VerbV1 {
    fn from(v: Verb) -> Self {
        match v {
            Verb::Get => VerbV1::Get,
            Verb::List => VerbV1::List,
            Verb::Create => VerbV1::Create,
            Verb::Update => VerbV1::Update,
            Verb::Patch => VerbV1::Patch,
            Verb::Delete => VerbV1::Delete,
        }
    }
}

impl From<VerbV1> for Verb {
    fn from(v: VerbV1) -> Self {
        match v {
            VerbV1::Get => Verb::Get,
            VerbV1::List => Verb::List,
            VerbV1::Create => Verb::Create,
            VerbV1::Update => Verb::Update,
            VerbV1::Patch => Verb::Patch,
            VerbV1::Delete => Verb::Delete,
        }
    }
}

impl From<Subresource> for SubresourceV1 {
    fn from(s: Subresource) -> Self {
        match s {
            Subresource::Status => SubresourceV1::Status,
            Subresource::Scale => SubresourceV1::Scale,
        }
    }
}

impl From<SubresourceV1> for Subresource {
    fn from(s: SubresourceV1) -> Self {
        match s {
            SubresourceV1::Status => Subresource::Status,
            SubresourceV1::Scale => Subresource::Scale,
        }
    }
}

impl From<&RequestBody> for RequestBodyV1 {
    fn from(b: &RequestBody) -> Self {
        match b {
            RequestBody::None => RequestBodyV1::None,
            RequestBody::Object(o) => RequestBodyV1::Object(o.clone()),
            RequestBody::Patch(t, p) => RequestBodyV1::Patch((*t).into(), p.clone()),
        }
    }
}

impl From<RequestBodyV1> for RequestBody {
    fn from(b: RequestBodyV1) -> Self {
        match b {
            RequestBodyV1::None => RequestBody::None,
            RequestBodyV1::Object(o) => RequestBody::Object(o),
            RequestBodyV1::Patch(t, p) => RequestBody::Patch(t.into(), p),
        }
    }
}

impl From<PatchType> for PatchTypeV1 {
    fn from(t: PatchType) -> Self {
        match t {
            PatchType::Merge => PatchTypeV1::Merge,
            PatchType::Json => PatchTypeV1::Json,
            PatchType::Strategic => PatchTypeV1::Strategic,
        }
    }
}

impl From<PatchTypeV1> for PatchType {
    fn from(t: PatchTypeV1) -> Self {
        match t {
            PatchTypeV1::Merge => PatchType::Merge,
            PatchTypeV1::Json => PatchType::Json,
            PatchTypeV1::Strategic => PatchType::Strategic,
        }
    }
}

// ---- faults and image behaviours ------------------------------------------------------------

impl From<&Fault> for FaultV1 {
    fn from(f: &Fault) -> Self {
        match f.clone() {
            Fault::PauseController { controller } => FaultV1::PauseController { controller },
            Fault::ResumeController { controller } => FaultV1::ResumeController { controller },
            Fault::CrashController { controller } => FaultV1::CrashController { controller },
            Fault::RestartController { controller } => FaultV1::RestartController { controller },
            Fault::WatchLatency { controller, ms } => FaultV1::WatchLatency { controller, ms },
            Fault::ApiFailures {
                principal,
                count,
                code,
            } => FaultV1::ApiFailures {
                principal,
                count,
                code,
            },
            Fault::ClearApiFailures => FaultV1::ClearApiFailures,
            Fault::ImagePullFailure { node, failing } => {
                FaultV1::ImagePullFailure { node, failing }
            }
            Fault::AddNode { node } => FaultV1::AddNode {
                node: NodeV1 {
                    name: node.name,
                    cpu: node.cpu,
                    memory: node.memory,
                    pods: node.pods,
                },
            },
            Fault::RemoveNode { node } => FaultV1::RemoveNode { node },
        }
    }
}

impl From<FaultV1> for Fault {
    fn from(f: FaultV1) -> Self {
        match f {
            FaultV1::PauseController { controller } => Fault::PauseController { controller },
            FaultV1::ResumeController { controller } => Fault::ResumeController { controller },
            FaultV1::CrashController { controller } => Fault::CrashController { controller },
            FaultV1::RestartController { controller } => Fault::RestartController { controller },
            FaultV1::WatchLatency { controller, ms } => Fault::WatchLatency { controller, ms },
            FaultV1::ApiFailures {
                principal,
                count,
                code,
            } => Fault::ApiFailures {
                principal,
                count,
                code,
            },
            FaultV1::ClearApiFailures => Fault::ClearApiFailures,
            FaultV1::ImagePullFailure { node, failing } => {
                Fault::ImagePullFailure { node, failing }
            }
            FaultV1::AddNode { node } => Fault::AddNode {
                node: crate::engine::NodeSpec {
                    name: node.name,
                    cpu: node.cpu,
                    memory: node.memory,
                    pods: node.pods,
                },
            },
            FaultV1::RemoveNode { node } => Fault::RemoveNode { node },
        }
    }
}

impl From<&ImageBehaviour> for ImageBehaviourV1 {
    fn from(b: &ImageBehaviour) -> Self {
        match *b {
            ImageBehaviour::Ok { pull_ms } => ImageBehaviourV1::Ok { pull_ms },
            ImageBehaviour::PullFails => ImageBehaviourV1::PullFails,
            ImageBehaviour::Crashes { run_ms } => ImageBehaviourV1::Crashes { run_ms },
            ImageBehaviour::Completes { run_ms } => ImageBehaviourV1::Completes { run_ms },
            ImageBehaviour::ProbeFails => ImageBehaviourV1::ProbeFails,
        }
    }
}

impl From<ImageBehaviourV1> for ImageBehaviour {
    fn from(b: ImageBehaviourV1) -> Self {
        match b {
            ImageBehaviourV1::Ok { pull_ms } => ImageBehaviour::Ok { pull_ms },
            ImageBehaviourV1::PullFails => ImageBehaviour::PullFails,
            ImageBehaviourV1::Crashes { run_ms } => ImageBehaviour::Crashes { run_ms },
            ImageBehaviourV1::Completes { run_ms } => ImageBehaviour::Completes { run_ms },
            ImageBehaviourV1::ProbeFails => ImageBehaviour::ProbeFails,
        }
    }
}

// ---- serde for the playground's own types goes through the format ---------------------------

impl Serialize for Workspace {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        WorkspaceV1::from(self).serialize(s)
    }
}

impl<'de> Deserialize<'de> for Workspace {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        WorkspaceV1::deserialize(d).map(Workspace::from)
    }
}

impl Serialize for SessionAction {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        ActionV1::from(self).serialize(s)
    }
}

impl<'de> Deserialize<'de> for SessionAction {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        ActionV1::deserialize(d).map(SessionAction::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every engine input the log can hold goes through the format and back unchanged.
    #[test]
    fn every_input_survives_the_format() {
        let inputs = [
            Input::Advance { ms: 5 },
            Input::SetLoad {
                target: "default/web".into(),
                millicores: 7,
            },
            Input::SetImage {
                image: "x".into(),
                behaviour: ImageBehaviour::Crashes { run_ms: 3 },
            },
            Input::SetRbac { enforced: false },
            Input::Fault {
                fault: Fault::WatchLatency {
                    controller: Some("kubelet".into()),
                    ms: 9,
                },
            },
            Input::Request {
                request: ApiRequest::patch_status(
                    "bob",
                    GroupResource::new("apps", "deployments"),
                    "default",
                    "web",
                    PatchType::Json,
                    crate::json::json!([]),
                ),
            },
        ];
        for input in inputs {
            let action = SessionAction::apply(input);
            let text = serde_json::to_string(&action).unwrap_or_default();
            let back: Result<SessionAction, _> = serde_json::from_str(&text);
            assert_eq!(back.ok(), Some(action), "{text}");
        }
    }
}
