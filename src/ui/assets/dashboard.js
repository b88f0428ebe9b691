// The dashboard's only script of its own: copy buttons and the live-connection note.
// Everything else works without it (forms post, links navigate); htmx adds live refresh.
(function () {
  'use strict';

  function copyText(text, button) {
    var done = function () {
      var label = button.textContent;
      button.textContent = 'Copied';
      button.classList.add('copied');
      setTimeout(function () {
        button.textContent = label;
        button.classList.remove('copied');
      }, 1500);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () {});
      return;
    }
    // Plain-HTTP pages have no clipboard API: copy through a selection instead.
    var area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.className = 'copy-buffer';
    document.body.appendChild(area);
    area.select();
    try {
      document.execCommand('copy');
      done();
    } finally {
      document.body.removeChild(area);
    }
  }

  document.addEventListener('click', function (event) {
    var button = event.target.closest && event.target.closest('button.copy');
    if (!button) return;
    var text = button.getAttribute('data-copy-text');
    if (text === null) {
      var source = document.getElementById(button.getAttribute('data-copy') || '');
      text = source ? source.textContent : '';
    }
    copyText(text || '', button);
  });

  function liveState(text, state) {
    var notes = document.querySelectorAll('[data-live-state]');
    for (var i = 0; i < notes.length; i++) {
      notes[i].textContent = text;
      notes[i].setAttribute('data-state', state);
    }
  }
  document.addEventListener('htmx:sseOpen', function () {
    liveState('Live', 'open');
  });
  document.addEventListener('htmx:sseError', function () {
    liveState('Reconnecting…', 'error');
  });
})();
