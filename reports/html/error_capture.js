// Installed in <head>, before any other script: it catches errors of the main
// script too (a syntax error there would prevent it from installing a handler)
// and shows them in #ddpscope-errors instead of letting them pass silently.

window.ddpscopeErrors = [];
window.ddpscopeReport = function (msg) {
  window.ddpscopeErrors.push(String(msg));
  var pre = document.getElementById('ddpscope-errors');
  if (pre) pre.textContent = window.ddpscopeErrors.join('\n');
};
window.addEventListener('error', function (e) {
  window.ddpscopeReport('error: ' + e.message + ' (line ' + e.lineno + ')');
});
window.addEventListener('unhandledrejection', function (e) {
  window.ddpscopeReport('unhandled rejection: ' + e.reason);
});
document.addEventListener('DOMContentLoaded', function () {
  if (!window.ddpscopeReady) window.ddpscopeReport('the charts did not finish drawing');
});
