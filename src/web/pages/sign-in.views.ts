// Sign-in and the first sign-in's password choice: single-card pages (pages/sign-in.ts).
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../users/password.js';
import { html } from '../html.js';
import { alert, csrfField, sessionFormFields, singleCard } from '../layout.js';
import { PAGES } from '../paths.js';

export function signInPage(input: {
  csrfToken: string;
  email?: string;
  error?: string;
  notice?: string;
}): string {
  return singleCard(
    'Sign in',
    html`${input.error && alert('error', input.error)}${input.notice && alert('info', input.notice)}
<form method="post" action="${PAGES.signIn}" class="stack" novalidate>
  ${csrfField(input.csrfToken)}
  <div class="field">
    <label for="email">Email</label>
    <input id="email" name="email" type="email" autocomplete="username" required value="${input.email ?? ''}"${input.email ? '' : html` autofocus`}>
  </div>
  <div class="field">
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="current-password" required maxlength="${PASSWORD_MAX_LENGTH}"${input.email ? html` autofocus` : ''}>
  </div>
  <button type="submit" class="button button-primary button-wide">Sign in</button>
</form>
<p class="hint">New here? An owner of your organisation creates your account and gives you a one-time password.</p>`,
  );
}

export function choosePasswordPage(input: { csrfToken: string; email: string; error?: string }) {
  return singleCard(
    'Choose your password',
    html`<p>You signed in as <strong>${input.email}</strong> with a one-time password. Choose your own password to continue.</p>
${input.error && alert('error', input.error)}
<form method="post" action="${PAGES.password}" class="stack" novalidate>
  ${sessionFormFields(input.csrfToken)}
  <input type="text" name="username" autocomplete="username" value="${input.email}" hidden>
  <div class="field">
    <label for="new-password">New password</label>
    <input id="new-password" name="password" type="password" autocomplete="new-password" required minlength="${PASSWORD_MIN_LENGTH}" maxlength="${PASSWORD_MAX_LENGTH}" aria-describedby="password-rules" autofocus>
    <p class="hint" id="password-rules">At least ${PASSWORD_MIN_LENGTH} characters. A phrase of a few words is easy to remember and hard to guess.</p>
  </div>
  <div class="field">
    <label for="confirm-password">Repeat the new password</label>
    <input id="confirm-password" name="confirmation" type="password" autocomplete="new-password" required maxlength="${PASSWORD_MAX_LENGTH}">
  </div>
  <button type="submit" class="button button-primary button-wide">Save password</button>
</form>`,
  );
}
