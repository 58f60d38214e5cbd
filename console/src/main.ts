// The console's entry point: the shell (navigation, who is signed in, sign-out) and the routing of
// its pages in the browser, with history. Everything shown comes from /v1 with the signed-in token.
import '../styles/console.css';
import 'uplot/dist/uPlot.min.css';
import { h } from './dom.js';
import { chargebackPage } from './pages/chargeback.js';
import { fleetPage } from './pages/fleet.js';
import { overviewPage } from './pages/overview.js';
import { rankingsPage } from './pages/rankings.js';
import { signInPage } from './pages/sign-in.js';
import { statisticsPage } from './pages/statistics.js';
import { workloadPage } from './pages/workload.js';
import { workloadsPage } from './pages/workloads.js';
import { NAV, routeOf, type Page, type PageName } from './router.js';
import { clearSession, readSession, takeSessionFromFragment } from './session.js';
import { errorBox, SIGN_OUT_EVENT } from './ui.js';

const PAGES: Record<PageName, Page> = {
  overview: overviewPage,
  workloads: workloadsPage,
  workload: workloadPage,
  rankings: rankingsPage,
  statistics: statisticsPage,
  fleet: fleetPage,
  chargeback: chargebackPage,
};

let current: AbortController | undefined;

function render(options: { focus: boolean }): void {
  current?.abort();
  const controller = new AbortController();
  current = controller;
  const app = document.getElementById('app');
  if (app === null) return;
  const main = h('main', { id: 'main', tabindex: -1 });
  const session = readSession();
  if (session === undefined) {
    app.replaceChildren(skipLink(), header(undefined), main);
    signInPage(main, () => render({ focus: true }));
    return;
  }
  const route = routeOf(location.pathname) ?? { page: 'overview' as const };
  app.replaceChildren(skipLink(), header(session.organizationId, route.page), main);
  const heading = h('h1', { tabindex: -1 });
  main.append(heading);
  const title = (text: string) => {
    heading.textContent = text;
    document.title = `${text} · gpu-capacity-api`;
  };
  const page = PAGES[route.page];
  page(main, {
    session,
    query: new URLSearchParams(location.search),
    ...(route.id === undefined ? {} : { id: route.id }),
    signal: controller.signal,
    go,
    title,
  }).catch((error: unknown) => {
    // Sections show their own errors; this is for a fault of the page itself, which must not go unseen.
    if (!controller.signal.aborted) main.append(errorBox(error));
  });
  // After a navigation, screen readers and the keyboard start at the new page's title.
  if (options.focus) heading.focus();
}

function skipLink(): HTMLElement {
  // Moves the focus without a fragment navigation, which would add a history entry and re-render.
  const skip = (event: Event) => {
    event.preventDefault();
    document.getElementById('main')?.focus();
  };
  return h('a', { class: 'skip', href: '#main', onclick: skip }, 'Skip to content');
}

function header(organizationId: string | undefined, page?: PageName): HTMLElement {
  const active = page === 'workload' ? 'workloads' : page;
  return h(
    'header',
    { class: 'top' },
    h('a', { class: 'brand', href: '/' }, 'gpu-capacity-api'),
    organizationId === undefined
      ? null
      : h('nav', { 'aria-label': 'Pages' }, h('ul', {}, ...NAV.map((item) => h('li', {}, h('a', { href: item.path, ...(item.page === active ? { 'aria-current': 'page' } : {}) }, item.title))))),
    organizationId === undefined
      ? null
      : h(
          'div',
          { class: 'who' },
          h('span', {}, `Organization ${organizationId}`),
          h('button', { type: 'button', onclick: signOut }, 'Sign out'),
        ),
  );
}

function signOut(): void {
  clearSession();
  history.pushState(null, '', '/');
  render({ focus: true });
}

function go(url: string): void {
  history.pushState(null, '', url);
  render({ focus: true });
}

// Links to the console's own pages open in place, keeping the token in memory and the history whole;
// modified clicks (new tab, new window), downloads and every other link behave as usual.
document.addEventListener('click', (event) => {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const anchor = (event.target as Element | null)?.closest('a');
  if (anchor === null || anchor === undefined || anchor.target !== '' || anchor.origin !== location.origin) return;
  if (anchor.hasAttribute('download')) return;
  if (anchor.hash !== '' && anchor.pathname === location.pathname && anchor.search === location.search) return;
  if (routeOf(anchor.pathname) === undefined) return;
  event.preventDefault();
  go(`${anchor.pathname}${anchor.search}`);
});
window.addEventListener('popstate', () => render({ focus: true }));
// A sign-in link pasted into a tab that already shows the console changes only the fragment: no load.
window.addEventListener('hashchange', () => {
  if (takeSessionFromFragment()) render({ focus: true });
});
document.addEventListener(SIGN_OUT_EVENT, signOut);

takeSessionFromFragment();
render({ focus: false });
