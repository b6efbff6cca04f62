// The landing page's script: counts visits in /db (GET, POST, PUT: traffic service.yml ignores)
// and talks to the posts API (traffic Spectator documents).
/* global document, fetch, FormData */
'use strict';

const jsonHeaders = { 'Content-Type': 'application/json' };

async function countVisit() {
  const db = await (await fetch('/db')).json();
  await fetch('/db', { method: 'POST', headers: jsonHeaders, body: JSON.stringify({ event: 'visit' }) });
  const updated = { ...db, visits: (db.visits || 0) + 1, lastVisit: new Date().toISOString() };
  await fetch('/db', { method: 'PUT', headers: jsonHeaders, body: JSON.stringify(updated) });
  document.getElementById('visits').textContent = String(updated.visits);
}

async function showPosts() {
  const posts = await (await fetch('/posts')).json();
  const list = document.getElementById('posts');
  list.replaceChildren(
    ...posts.map((post) => {
      const item = document.createElement('li');
      item.textContent = `#${post.id} ${post.title} (by ${post.author})`;
      return item;
    }),
  );
}

document.getElementById('new-post').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.target;
  const fields = new FormData(form);
  const response = await fetch('/posts', {
    method: 'POST',
    headers: jsonHeaders,
    body: JSON.stringify({ title: fields.get('title'), author: fields.get('author') }),
  });
  document.getElementById('form-error').textContent = response.ok ? '' : (await response.json()).message;
  if (response.ok) form.reset();
  await showPosts();
});

countVisit().catch(() => undefined);
showPosts().catch(() => undefined);
