"""The cookies of a run: kept by the standard library's rules, and with --cookie-jar read from and written to a
Netscape cookies.txt file (the format curl and browser extensions write)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .exceptions import OptionError

if TYPE_CHECKING:
    import email.message
    import http.cookiejar


class _Headers:
    """The one method http.cookiejar asks of a response: info(), a message with its Set-Cookie headers."""

    def __init__(self, set_cookies: list[str]) -> None:
        import email.message

        self._message = email.message.Message()
        for value in set_cookies:
            self._message["Set-Cookie"] = value  # appends: a message keeps repeated headers

    def info(self) -> email.message.Message:
        return self._message


class Cookies:
    """Domain, path, secure and expiry rules are http.cookiejar's, so a cookie goes only to the hosts it is for."""

    def __init__(self, path: str | None = None) -> None:
        self.path = path
        self._made: http.cookiejar.MozillaCookieJar | None = None
        self.any = False  # whether the jar ever held a cookie: len(jar) walks every cookie, per request
        self._local_names: set[str] = set()  # names http.cookiejar gave hosts with no dot (localhost.local)

    @property
    def _jar(self) -> http.cookiejar.MozillaCookieJar:
        """Made on first use: most runs never see a cookie, and http.cookiejar and urllib.request take a while
        to load."""
        if self._made is None:
            import http.cookiejar

            self._made = http.cookiejar.MozillaCookieJar()
        return self._made

    def load(self) -> None:
        """Read the jar file if it exists (a missing file is an empty jar, written at the end)."""
        if self.path is None:
            return
        # Say now, not after the run, when the jar can't be written at the end.
        if not os.access(self.path if os.path.exists(self.path) else os.path.dirname(self.path) or ".", os.W_OK):
            raise OptionError("cookie_jar", f"{self.path}: can't write here")
        if not os.path.exists(self.path):
            return
        import http.cookiejar

        try:
            self._jar.load(self.path, ignore_discard=True, ignore_expires=True)
        except (OSError, http.cookiejar.LoadError, UnicodeDecodeError) as e:
            raise OptionError("cookie_jar", f"{self.path}: can't read a Netscape cookies.txt: {_why(e)}") from None
        for cookie in self._jar:
            if cookie.expires == 0:  # curl writes session cookies with expiry 0
                cookie.expires, cookie.discard = None, True
            if _dotless(cookie.domain):  # curl's "localhost": http.cookiejar's own name for it is localhost.local
                cookie.domain = self._local(cookie.domain)
        self._jar.clear_expired_cookies()
        self.any = len(self._jar) > 0

    def save(self) -> None:
        if self.path is None:
            return
        named = [c for c in self._jar if c.domain in self._local_names]
        for cookie in named:  # written as curl and browsers name the host: localhost, not localhost.local
            cookie.domain = cookie.domain.removesuffix(".local")
        try:
            self._jar.save(self.path, ignore_discard=True)
        except OSError as e:
            raise OptionError("cookie_jar", f"{self.path}: can't write: {_why(e)}") from None
        finally:
            for cookie in named:
                cookie.domain += ".local"

    def _local(self, host: str) -> str:
        """http.cookiejar's name for a host with no dot (localhost.local), which it matches requests to it by."""
        name = f"{host}.local"
        self._local_names.add(name)
        return name

    def header(self, url: str) -> str | None:
        """The Cookie header for a request to url, or None."""
        if not self.any:
            return None
        import urllib.request

        request = urllib.request.Request(url)
        self._jar.add_cookie_header(request)
        return request.get_header("Cookie")

    def store(self, url: str, set_cookies: list[str]) -> None:
        """Keep the cookies a response from url set."""
        if set_cookies:
            import urllib.request

            host = urllib.request.Request(url).host.rsplit(":", 1)[0]
            if _dotless(host):  # its cookies are kept for host.local (the jar file names it host again)
                self._local(host.lower())
            self._jar.extract_cookies(_Headers(set_cookies), urllib.request.Request(url))  # type: ignore[arg-type]
            self.any = self.any or len(self._jar) > 0

    def __len__(self) -> int:
        return len(self._made) if self._made is not None else 0


def _dotless(domain: str) -> bool:
    """A host name with no dot (localhost, an intranet name), which http.cookiejar calls name.local."""
    name = domain.lstrip(".")
    return bool(name) and "." not in name and ":" not in name and not name.startswith("[")


def _why(e: BaseException) -> str:
    return e.strerror.lower() if isinstance(e, OSError) and e.strerror else str(e)
