/*
 * The sandbox's demo page for the OTP dialog: opens the dialog for a service_reference_id and shows
 * the interface doc §6.1 message it posts, through listenForServicePayment (page-helper.js). The
 * messages received are also kept in window.receivedServiceMessages.
 */
(function () {
  'use strict';

  var plugin = document.querySelector('script[src$="/js/plugins/OTPPaymentPlugin.js"]');
  var serviceOrigin = new URL(plugin.src, window.location.href).origin;
  var received = [];
  window.receivedServiceMessages = received;
  var input = document.getElementById('reference');
  var status = document.getElementById('status');

  listenForServicePayment(serviceOrigin, function (message) {
    received.push(message);
    var paid = message.payment_status === 'PAID';
    status.textContent =
      (paid ? 'Paid' : 'Failed') +
      ': charge ' +
      message.service_reference_id +
      ', gateway reference ' +
      message.payment_gateway_reference_id;
    status.className = paid ? 'status paid' : 'status failed';
    document.getElementById('message').textContent = JSON.stringify(message, null, 2);
  });

  var given = new URLSearchParams(window.location.search).get('service_reference_id');
  if (given) input.value = given;

  document.getElementById('open-form').addEventListener('submit', function (event) {
    event.preventDefault();
    if (window.SERVICEOTPDIALOG.init()) window.SERVICEOTPDIALOG.load(input.value.trim());
  });
})();
