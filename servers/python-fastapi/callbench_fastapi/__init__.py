"""callbench reference server: REST/JSON on FastAPI, served by uvicorn (uvloop + httptools)."""
