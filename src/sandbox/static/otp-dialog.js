/*
 * The sandbox's OTP dialog (shown in an iframe by OTPPaymentPlugin.js): shows the charge, takes the
 * one-time password, has the sandbox settle the charge, and posts the interface doc §6.1 message
 * to the page that opened it (only to the origin the script named in parent_origin).
 */
(function () {
  'use strict';

  var match = /^\/otp\/dialog\/(\d{1,18})$/.exec(window.location.pathname);
  var id = match ? match[1] : null;
  var parentOrigin = new URLSearchParams(window.location.search).get('parent_origin');
  var form = document.getElementById('otp-form');
  var input = document.getElementById('otp');
  var button = document.getElementById('confirm');
  var notice = document.getElementById('notice');

  function say(text, done) {
    notice.textContent = text;
    notice.className = done ? 'notice done' : 'notice';
    notice.hidden = false;
  }

  function stop(text) {
    say(text);
    input.disabled = true;
    button.disabled = true;
  }

  function isOrigin(value) {
    try {
      return new URL(value).origin === value;
    } catch (e) {
      return false;
    }
  }

  function readJson(response) {
    return response.json().then(function (body) {
      return { ok: response.ok, body: body };
    });
  }

  if (!id) return stop('This dialog was opened without a charge reference.');
  if (window.parent === window || !parentOrigin || !isOrigin(parentOrigin)) {
    return stop("This dialog must be opened by the OTP script on the merchant's page.");
  }

  fetch('/otp/charges/' + id)
    .then(readJson)
    .then(function (res) {
      if (!res.ok) return stop(res.body.message || 'This payment was not found.');
      document.getElementById('amount').textContent = 'EGP ' + res.body.amount;
      document.getElementById('card').textContent = '\u2022\u2022\u2022\u2022 ' + res.body.card_last_four;
      if (res.body.status !== 'AWAITING_OTP') return stop('This payment is not waiting for a one-time password.');
      input.focus();
    })
    .catch(function () {
      stop('The payment service could not be reached.');
    });

  form.addEventListener('submit', function (event) {
    event.preventDefault();
    var otp = input.value.trim();
    if (!/^\d{4,8}$/.test(otp)) return say('Enter the 4 to 8 digits of the one-time password.');
    notice.hidden = true;
    button.disabled = true;
    button.textContent = 'Confirming\u2026';
    fetch('/otp/charges/' + id, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ otp: otp }),
    })
      .then(readJson)
      .then(function (res) {
        if (!res.ok) return stop(res.body.message || 'The payment could not be confirmed.');
        var paid = res.body.payment_status === 'PAID';
        input.disabled = true;
        button.textContent = paid ? 'Payment confirmed' : 'Payment failed';
        say(paid ? 'Payment confirmed.' : 'The payment failed.', paid);
        window.parent.postMessage(res.body, parentOrigin);
      })
      .catch(function () {
        say('The payment service could not be reached. Try again.');
        button.disabled = false;
        button.textContent = 'Confirm payment';
      });
  });
})();
