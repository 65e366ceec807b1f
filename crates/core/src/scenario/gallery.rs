//! The gallery: one scenario per idea of the spec/status model, each with a narrated lesson.
//! The files live in `tests/scenarios/` (where `converge check` runs them in CI); they are
//! compiled in so the playground can open them offline.

/// One gallery entry: a short URL-safe id (the file name without `.yaml`) and the file's text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GalleryEntry {
    pub id: &'static str,
    pub text: &'static str,
}

macro_rules! entries {
    ($($id:literal),* $(,)?) => {
        &[$(GalleryEntry {
            id: $id,
            text: include_str!(concat!("../../../../tests/scenarios/", $id, ".yaml")),
        }),*]
    };
}

macro_rules! gallery {
    ($($id:literal),* $(,)?) => {
        /// The gallery, in teaching order.
        pub const GALLERY: &[GalleryEntry] = entries![$($id),*];
        /// The gallery's ids, in teaching order, without the texts: the playground's module
        /// fetches those (`gallery.json`, web/gallery-bundle.mjs) instead of carrying them.
        pub const GALLERY_IDS: &[&str] = &[$($id),*];
    };
}

gallery![
    "scale-up",
    "feedback-loop",
    "reconcile-loop",
    "bad-image",
    "rapid-edits",
    "paused-controller",
    "conditions",
    "status-protection",
    "crd-status-subresource",
    "optimistic-concurrency",
    "job-backoff-limit",
    "daemonset-new-node",
    "statefulset-partition",
    "readiness-probe-endpoints",
];

/// The entry with this id.
pub fn find(id: &str) -> Option<&'static GalleryEntry> {
    GALLERY.iter().find(|e| e.id == id)
}
