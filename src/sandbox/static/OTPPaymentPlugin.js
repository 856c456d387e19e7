/*
 * OTP dialog script of the bulk-cashout sandbox (interface doc §4, §6.1). A page loads it from the
 * environment it charges on, holds an element with id "service-otp-container", then calls
 * SERVICEOTPDIALOG.init() and SERVICEOTPDIALOG.load(service_reference_id) with the reference of a
 * charge answered with three_d_secured (§2.3). The dialog (an iframe served by the same
 * environment) asks for the one-time password; once the charge is settled it closes itself and
 * the page receives the §6.1 message through postMessage, from this script's origin.
 * Problems (no container, no reference) are reported on the console; nothing is thrown.
 */
(function () {
  'use strict';

  var CONTAINER_ID = 'service-otp-container';
  var PREFIX = 'SERVICEOTPDIALOG: ';
  var script = document.currentScript;
  // The environment this script came from: the dialog is loaded from, and its message comes from, there.
  var ORIGIN = script && script.src ? new URL(script.src, window.location.href).origin : window.location.origin;
  var state = { container: null, overlay: null, frame: null, listening: false };

  function report(text) {
    if (window.console && typeof window.console.error === 'function') window.console.error(PREFIX + text);
  }

  function close() {
    if (state.overlay && state.overlay.parentNode) state.overlay.parentNode.removeChild(state.overlay);
    state.overlay = null;
    state.frame = null;
  }

  // Runs before the page's own (non-capturing) listeners, so the dialog is gone when the page acts.
  function onMessage(event) {
    if (!state.frame || event.source !== state.frame.contentWindow || event.origin !== ORIGIN) return;
    var m = event.data;
    if (!m || typeof m !== 'object') return;
    if (m.message_source !== 'service' || m.message_type !== 'service_browser_callback') return;
    close();
  }

  function init() {
    var container = document.getElementById(CONTAINER_ID);
    if (!container) {
      report(
        'no element with id "' +
          CONTAINER_ID +
          '" on this page; add <div id="' +
          CONTAINER_ID +
          '"></div> before calling SERVICEOTPDIALOG.init()',
      );
      state.container = null;
      return false;
    }
    state.container = container;
    if (!state.listening) {
      window.addEventListener('message', onMessage, true);
      state.listening = true;
    }
    return true;
  }

  function style(el, rules) {
    for (var k in rules) if (Object.prototype.hasOwnProperty.call(rules, k)) el.style[k] = rules[k];
  }

  function load(serviceReferenceId) {
    var ref = serviceReferenceId === undefined || serviceReferenceId === null ? '' : String(serviceReferenceId).trim();
    if (!/^\d{1,18}$/.test(ref)) {
      report(
        'load() needs the service_reference_id of a charge answered with three_d_secured (a whole number), got ' +
          JSON.stringify(serviceReferenceId === undefined ? null : serviceReferenceId),
      );
      return false;
    }
    if (!state.container || !document.body || !document.body.contains(state.container)) {
      if (!init()) return false;
    }
    close();
    var overlay = document.createElement('div');
    overlay.setAttribute('data-service-otp-dialog', ref);
    style(overlay, {
      position: 'fixed',
      top: '0',
      left: '0',
      right: '0',
      bottom: '0',
      zIndex: '2147483000',
      display: 'flex',
      alignItems: 'center',
      justifyContent: 'center',
      background: 'rgba(15, 23, 42, 0.55)',
      padding: '16px',
      boxSizing: 'border-box',
    });
    var frame = document.createElement('iframe');
    frame.title = 'Card verification';
    frame.src = ORIGIN + '/otp/dialog/' + ref + '?parent_origin=' + encodeURIComponent(window.location.origin);
    style(frame, {
      width: '420px',
      maxWidth: '100%',
      height: '460px',
      maxHeight: '100%',
      border: '0',
      borderRadius: '14px',
      background: '#ffffff',
      boxShadow: '0 24px 48px rgba(15, 23, 42, 0.35)',
    });
    overlay.appendChild(frame);
    state.container.appendChild(overlay);
    state.overlay = overlay;
    state.frame = frame;
    return true;
  }

  window.SERVICEOTPDIALOG = Object.freeze({ init: init, load: load });
})();
