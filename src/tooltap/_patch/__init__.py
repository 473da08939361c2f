"""I/O edge: wrapt wrappers, the httpx/httpx2 transport tap and stream proxies."""
