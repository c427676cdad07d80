"""A person who signs in on our pages with the school's account: from our login page she takes the "Masuk dengan
akun sekolah" link, logs in and consents at the school's provider (oidc-provider's pages), comes back through
/login/callback and decides on our consent page."""

import re
from dataclasses import dataclass, field
from html import unescape
from urllib.parse import urljoin

import httpx2

from tests.auth.oidc.support import browse
from tests.auth.sekolah_support import Browser

SCHOOL_LINK = re.compile(r'<a [^>]*id="masuk-sekolah" href="([^"]+)">Masuk dengan akun sekolah</a>')


@dataclass
class SchoolBrowser(Browser):
    """`Browser` whose person is `login` at the provider; `callback` is our /login/callback (where she leaves the
    provider's pages); the prompts of the provider's forms she submitted go to `provider_pages`."""

    login: str = ""
    callback: str = ""
    provider_pages: list[str] = field(default_factory=list)

    async def sign_in(self, authorize_url: str) -> httpx2.Response:
        """From the authorization URL to the redirect back to the client (or the page that refused)."""
        page = await self.follow(authorize_url)
        assert (page.status_code, page.url.path) == (200, "/masuk"), page.text[:500]
        link = SCHOOL_LINK.search(page.text)
        assert link, page.text[:800]
        away = await self.http.get(urljoin(str(page.url), unescape(link.group(1))))
        assert away.status_code == 303, away.text[:500]
        back = await browse(away.headers["location"], self.login, self.callback, self.provider_pages)
        page = await self.follow(back)
        if page.url.path == "/izin" and page.status_code == 200:
            page = await self.submit(page, keputusan=self.keputusan)
        return page
