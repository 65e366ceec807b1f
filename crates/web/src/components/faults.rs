//! The fault panel: pause, resume, crash and restart each controller, the watch latency, image
//! pulls per node, nodes joining and leaving, and the API server's RBAC switch.

use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

use crate::state::{ControllerRow, FaultMsg, Msg};

/// What the panel draws from.
#[derive(PartialEq)]
pub struct FaultPanelProps {
    pub controllers: Vec<ControllerRow>,
    pub nodes: Vec<String>,
    pub rbac_enforced: bool,
    pub send: Callback<Msg>,
}

/// Drawn through `super::MemoPanel`, so only when these props change.
pub fn fault_panel(props: &FaultPanelProps) -> Html {
    let send = &props.send;
    let rbac = props.rbac_enforced;
    let fault = |f: fn(String) -> FaultMsg, c: &str| {
        let c = c.to_owned();
        send.reform(move |_| Msg::Fault(f(c.clone())))
    };
    html! {
        <section class="pane faults" aria-labelledby="faults-h">
            <h2 id="faults-h">{ "Faults" }</h2>
            <table>
                <caption class="visually-hidden">{ "Controllers" }</caption>
                <tbody>
                { for props.controllers.iter().map(|ControllerRow { name: c, state }| html! {
                    <tr>
                        <th scope="row">{ c.clone() }</th>
                        <td class="state">{ state.clone() }</td>
                        <td>
                            <button onclick={fault(FaultMsg::Pause, c)} aria-label={format!("Pause {c}")}>{ "Pause" }</button>
                            <button onclick={fault(FaultMsg::Resume, c)} aria-label={format!("Resume {c}")}>{ "Resume" }</button>
                            <button onclick={fault(FaultMsg::Crash, c)} aria-label={format!("Crash {c}")}>{ "Crash" }</button>
                            <button onclick={fault(FaultMsg::Restart, c)} aria-label={format!("Restart {c}")}>{ "Restart" }</button>
                        </td>
                    </tr>
                }) }
                </tbody>
            </table>
            <label>{ "Watch latency (all controllers) " }
                <select id="latency" onchange={send.reform(|e: Event| {
                    let s: HtmlSelectElement = e.target_unchecked_into();
                    Msg::Fault(FaultMsg::WatchLatency(s.value().parse().unwrap_or(5)))
                })}>
                    <option value="" selected=true disabled=true>{ "change…" }</option>
                    { for [5u64, 100, 1000, 5000].into_iter().map(|ms| html! { <option value={ms.to_string()}>{ format!("{ms} ms") }</option> }) }
                </select>
            </label>
            <ul class="image-pull">
                { for props.nodes.iter().map(|n| {
                    let (a, b, c) = (n.clone(), n.clone(), n.clone());
                    html! {
                        <li>{ format!("kubelet on {n}: image pulls ") }
                            <button onclick={send.reform(move |_| Msg::Fault(FaultMsg::ImagePull { node: a.clone(), failing: true }))} aria-label={format!("Fail image pulls on {n}")}>{ "fail" }</button>
                            <button onclick={send.reform(move |_| Msg::Fault(FaultMsg::ImagePull { node: b.clone(), failing: false }))} aria-label={format!("Heal image pulls on {n}")}>{ "heal" }</button>
                            <button onclick={send.reform(move |_| Msg::Fault(FaultMsg::RemoveNode(c.clone())))} aria-label={format!("Remove {n} from the cluster")}>{ "remove node" }</button>
                        </li>
                    }
                }) }
            </ul>
            <button onclick={send.reform(|_| Msg::Fault(FaultMsg::AddNode))}>{ "Add a node" }</button>
            <label class="switch">
                <input type="checkbox" id="rbac-enforced" checked={rbac}
                    onchange={send.reform(|e: Event| {
                        let i: HtmlInputElement = e.target_unchecked_into();
                        Msg::SetRbacEnforced(i.checked())
                    })} />
                { " Enforce RBAC in the API server" }
            </label>
            <p class="muted" id="rbac-note">{ if rbac {
                "To see RBAC at work, pick \"Act as app\" and \"/status subresource\" in the editor and Apply: 403. Act as the deployment controller and the same write succeeds."
            } else {
                "RBAC is off: every principal may write everything, status included (what status spoofing would look like). Turn it back on to restore the default policy."
            } }</p>
        </section>
    }
}
