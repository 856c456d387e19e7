/*
 * Page helper for the OTP dialog (interface doc §6.1). Calls onResult(message) with each message
 * the service's dialog posts to this page, and ignores every other message: one sent from another
 * origin than the service's, or whose message_source is not 'service'. serviceOrigin is the origin
 * the OTP script is loaded from, e.g. 'https://staging.example.com'.
 * The message tells the page what to show; whether an order is paid is for the merchant's server
 * to confirm with the service, never for a browser message alone.
 */
function listenForServicePayment(serviceOrigin, onResult) {
  window.addEventListener('message', function (event) {
    if (event.origin !== serviceOrigin) return;
    var message = event.data;
    if (message === null || typeof message !== 'object' || message.message_source !== 'service') return;
    if (message.message_type !== 'service_browser_callback') return;
    onResult(message);
  });
}
