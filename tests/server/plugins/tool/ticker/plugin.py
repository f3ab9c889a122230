async def count(n):
    for i in range(n):
        yield f"step {i}"
    yield {"total": n}
