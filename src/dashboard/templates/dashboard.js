// The dashboard's only script, served from its own origin: the batch page follows its batch
// (polls live.json every 3 seconds while it is being sent), the upload page follows its check,
// the drop zone takes a dragged file, and the problems table is filtered by column and reason.
(function () {
  'use strict';
  var POLL_MS = 3000;

  function follow(url, onData) {
    var stop = false;
    function tick() {
      if (stop) return;
      fetch(url, { credentials: 'same-origin', headers: { accept: 'application/json' } })
        .then(function (r) {
          return r.ok ? r.json() : null;
        })
        .then(function (data) {
          if (data && onData(data) === false) stop = true;
        })
        .catch(function () {
          /* try again at the next tick */
        })
        .then(function () {
          if (!stop) setTimeout(tick, POLL_MS);
        });
    }
    setTimeout(tick, POLL_MS);
  }

  function typing() {
    var a = document.activeElement;
    return a && (a.tagName === 'INPUT' || a.tagName === 'SELECT' || a.tagName === 'TEXTAREA') && a.value !== '';
  }

  function followBatch(box) {
    var id = box.getAttribute('data-batch');
    var shownState = box.getAttribute('data-state');
    follow('/batches/' + encodeURIComponent(id) + '/live.json', function (live) {
      var state = document.getElementById('batch-state');
      state.textContent = live.stateText;
      state.className = 'state ' + live.state;
      state.setAttribute('data-state', live.state);
      var bar = document.getElementById('batch-progress');
      bar.max = Math.max(1, live.requestsAll);
      bar.value = live.requestsDone;
      var done = document.getElementById('requests-done');
      done.textContent = done.textContent
        .replace(/^\d+/, String(live.requestsDone))
        .replace(/\d+(\D*)$/, live.requestsAll + '$1');
      var list = document.getElementById('by-state');
      list.textContent = '';
      live.byState.forEach(function (s) {
        var li = document.createElement('li');
        li.className = 'state ' + s.state;
        li.textContent = s.text + ': ' + s.count;
        list.appendChild(li);
      });
      Object.keys(live.requests).forEach(function (seq) {
        var cell = document.querySelector('tr[data-request="' + seq + '"] .state');
        if (!cell) return;
        cell.textContent = live.requests[seq].text;
        cell.className = 'state ' + live.requests[seq].state;
        cell.setAttribute('data-state', live.requests[seq].state);
      });
      // Once the batch is final, the page is drawn again with its report (unless a person is typing).
      if (live.final && live.state !== shownState) {
        if (!typing()) location.reload();
        return false;
      }
      return !live.final;
    });
  }

  function followUpload(box) {
    var id = box.getAttribute('data-upload');
    follow('/uploads/' + encodeURIComponent(id) + '/status.json', function (s) {
      var rows = document.getElementById('rows-read');
      rows.textContent = rows.textContent.replace(/\d+/, String(s.rowsRead));
      if (s.state !== 'checking') {
        location.reload();
        return false;
      }
      return true;
    });
  }

  function dropZone(zone) {
    var input = zone.querySelector('input[type=file]');
    var name = document.getElementById('file-name');
    function show() {
      name.textContent = input.files && input.files[0] ? input.files[0].name : '';
    }
    input.addEventListener('change', show);
    ['dragenter', 'dragover'].forEach(function (e) {
      zone.addEventListener(e, function (ev) {
        ev.preventDefault();
        zone.classList.add('over');
      });
    });
    ['dragleave', 'drop'].forEach(function (e) {
      zone.addEventListener(e, function () {
        zone.classList.remove('over');
      });
    });
    zone.addEventListener('drop', function (ev) {
      ev.preventDefault();
      if (ev.dataTransfer && ev.dataTransfer.files.length > 0) {
        input.files = ev.dataTransfer.files;
        show();
      }
    });
  }

  function filters() {
    var column = document.getElementById('filter-column');
    var reason = document.getElementById('filter-reason');
    function apply() {
      var rows = document.querySelectorAll('#problems tbody tr');
      for (var i = 0; i < rows.length; i++) {
        var r = rows[i];
        var ok =
          (!column.value || r.getAttribute('data-column') === column.value) &&
          (!reason.value || r.getAttribute('data-code') === reason.value);
        r.hidden = !ok;
      }
    }
    column.addEventListener('change', apply);
    reason.addEventListener('change', apply);
  }

  document.addEventListener('DOMContentLoaded', function () {
    var batch = document.getElementById('batch-live');
    var moving = ['queued', 'submitting', 'halted', 'staging'];
    if (batch && moving.indexOf(batch.getAttribute('data-state')) >= 0) followBatch(batch);
    var upload = document.getElementById('upload-progress');
    if (upload) followUpload(upload);
    var zone = document.getElementById('drop-zone');
    if (zone) dropZone(zone);
    if (document.getElementById('filter-column')) filters();
  });
})();
