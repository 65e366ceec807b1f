//! The keyboard-shortcuts dialog, with the Kubernetes release modelled. The platform opens it
//! (remembering what had focus) and gives focus back when it closes.

use web_sys::HtmlDialogElement;
use yew::prelude::*;

use crate::state::Msg;

/// What the panel draws from.
#[derive(PartialEq)]
pub struct HelpDialogProps {
    /// The `<dialog>` element, shared with the platform that opens it.
    pub dialog: NodeRef,
    pub send: Callback<Msg>,
}

/// Drawn through `super::MemoPanel`, so only when these props change.
pub fn help_dialog(props: &HelpDialogProps) -> Html {
    let close = {
        let dialog = props.dialog.clone();
        Callback::from(move |_| {
            if let Some(d) = dialog.cast::<HtmlDialogElement>() {
                d.close();
            }
        })
    };
    html! {
        <dialog ref={props.dialog.clone()} id="help" aria-labelledby="help-h" onclose={props.send.reform(|_| Msg::HelpClosed)}>
            <h2 id="help-h">{ "Keyboard shortcuts" }</h2>
            <dl class="shortcuts">
                <dt><kbd>{ "Space" }</kbd></dt><dd>{ "Play / pause" }</dd>
                <dt><kbd>{ "n" }</kbd></dt><dd>{ "Step (one event)" }</dd>
                <dt><kbd>{ "Shift" }</kbd>{ "+" }<kbd>{ "N" }</kbd></dt><dd>{ "Next event time" }</dd>
                <dt><kbd>{ "r" }</kbd></dt><dd>{ "Run until converged" }</dd>
                <dt><kbd>{ "t" }</kbd></dt><dd>{ "Open / close the kubectl terminal" }</dd>
                <dt><kbd>{ "?" }</kbd></dt><dd>{ "This help" }</dd>
                <dt><kbd>{ "↑" }</kbd>{ " " }<kbd>{ "↓" }</kbd>{ " " }<kbd>{ "Home" }</kbd>{ " " }<kbd>{ "End" }</kbd></dt><dd>{ "Move between objects in the object list" }</dd>
                <dt><kbd>{ "→" }</kbd>{ " " }<kbd>{ "←" }</kbd></dt><dd>{ "Open / close the group in the object list" }</dd>
                <dt><kbd>{ "Ctrl/Cmd" }</kbd>{ "+" }<kbd>{ "Enter" }</kbd></dt><dd>{ "Apply the editor (while editing)" }</dd>
                <dt><kbd>{ "Escape" }</kbd></dt><dd>{ "Leave the editor, so the keys above are shortcuts again" }</dd>
                <dt><kbd>{ "Tab" }</kbd>{ " " }<kbd>{ "↑" }</kbd>{ " " }<kbd>{ "↓" }</kbd>{ " " }<kbd>{ "Ctrl" }</kbd>{ "+" }<kbd>{ "C" }</kbd></dt><dd>{ "In the terminal: complete, walk the history, stop a -w" }</dd>
            </dl>
            <p class="muted">{ "Shortcuts are ignored while typing in a field. Escape closes this dialog." }</p>
            <h3 id="about-h">{ "About" }</h3>
            <p id="about">{ format!(
                "Converge models Kubernetes v{}: its API server, controllers, scheduler and kubelets run in this tab, deterministically, from the seed.",
                converge_core::KUBERNETES_VERSION
            ) }</p>
            <button onclick={close} autofocus=true>{ "Close" }</button>
        </dialog>
    }
}
