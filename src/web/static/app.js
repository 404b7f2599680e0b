// The web application's one script: the copy button, the generate form's merit cycle
// choice, and an upload's progress. The copy button copies the secret and says so in a live
// region.

// Ticking a merit cycle chooses "Only these"; choosing every merit cycle clears the ticks:
// the form never sends a choice its boxes contradict (the server refuses one anyway).
document.addEventListener('change', (event) => {
  const box = event.target;
  if (!(box instanceof HTMLInputElement) || !box.checked) return;
  const list = box.closest('[data-chooses]');
  if (list) {
    const choice = document.getElementById(list.getAttribute('data-chooses'));
    if (choice) choice.checked = true;
  } else if (box.hasAttribute('data-clears')) {
    for (const ticked of document.querySelectorAll(
      `${box.getAttribute('data-clears')} input:checked`,
    ))
      ticked.checked = false;
  }
});
// The generate form's slice: as the person types the rows or the manager (or changes the
// merit cycles), the number of employees it would read today, asked of the server a moment
// after the last keystroke. Without this script, "Count employees" posts the form for it.
let sliceTimer;
let sliceAsked = 0;
function countSlice(form) {
  const status = form.querySelector('[data-count-url]');
  if (!status) return;
  clearTimeout(sliceTimer);
  sliceTimer = setTimeout(async () => {
    const params = new URLSearchParams();
    params.set('rows', form.elements.namedItem('rows')?.value || '');
    params.set('reportsTo', form.elements.namedItem('reportsTo')?.value || '');
    if (form.querySelector('input[name="scope"][value="some"]:checked')) {
      const cycles = [...form.querySelectorAll('input[name^="cycle:"]:checked')].map((box) =>
        box.name.slice('cycle:'.length),
      );
      params.set('cycles', cycles.join(','));
    }
    const asked = ++sliceAsked;
    try {
      const response = await fetch(`${status.getAttribute('data-count-url')}?${params}`, {
        headers: { accept: 'application/json' },
      });
      const answer = await response.json();
      // An answer to an older question is dropped: the newest keystroke wins.
      if (asked !== sliceAsked) return;
      status.textContent = answer.text || '';
      status.classList.toggle('slice-count-problem', answer.problem === true);
    } catch {}
  }, 300);
}
document.addEventListener('input', (event) => {
  const field = event.target;
  if (field instanceof HTMLInputElement && field.form && field.hasAttribute('data-slice-field'))
    countSlice(field.form);
});
document.addEventListener('change', (event) => {
  const box = event.target;
  if (box instanceof HTMLInputElement && box.form && /^(cycle:|scope$)/.test(box.name)) {
    const fields = box.form.querySelectorAll('[data-slice-field]');
    if ([...fields].some((field) => field.value)) countSlice(box.form);
  }
});
// A form that uploads or imports a file shows how far it has come while the page waits for
// the answer: the server tells, every half second, what the organisation's upload is doing.
document.addEventListener('submit', (event) => {
  const form = event.target;
  const url = form instanceof HTMLFormElement ? form.getAttribute('data-upload-progress') : null;
  const box = url && form.querySelector('.upload-progress');
  if (!box) return;
  const bar = box.querySelector('progress');
  const text = box.querySelector('[role="status"]');
  const words = { receiving: 'Uploading', checking: 'Checking', importing: 'Importing' };
  box.hidden = false;
  for (const button of form.querySelectorAll('button')) button.disabled = true;
  const poll = async () => {
    try {
      const response = await fetch(url, { headers: { accept: 'application/json' } });
      const state = await response.json();
      if (state.running && state.total) {
        const percent = Math.min(100, Math.round((state.done / state.total) * 100));
        bar.value = percent;
        text.textContent = `${words[state.phase] || 'Working'}: ${percent} %`;
      } else if (state.running) {
        bar.removeAttribute('value');
        text.textContent = `${words[state.phase] || 'Working'}…`;
      }
    } catch {}
    setTimeout(poll, 500);
  };
  text.textContent = 'Starting…';
  setTimeout(poll, 250);
});
document.addEventListener('click', async (event) => {
  const button =
    event.target instanceof Element ? event.target.closest('[data-copy-target]') : null;
  if (!button) return;
  const field = document.getElementById(button.getAttribute('data-copy-target'));
  const status = document.getElementById(button.getAttribute('data-copy-status') || 'copy-status');
  if (!field) return;
  // A key is an input (its value); a command is a block of text.
  const isInput = 'value' in field;
  let copied = false;
  try {
    await navigator.clipboard.writeText(isInput ? field.value : field.textContent);
    copied = true;
  } catch {
    field.focus();
    if (isInput) field.select();
    else getSelection().selectAllChildren(field);
    copied = document.execCommand?.('copy');
  }
  if (status)
    status.textContent = copied
      ? 'Copied to the clipboard.'
      : 'Select the text and copy it with Ctrl+C or Cmd+C.';
  if (copied) button.textContent = button.getAttribute('data-copied-label') || 'Copied';
});
