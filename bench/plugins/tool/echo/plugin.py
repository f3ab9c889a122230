async def echo(text):
    return {"text": text}
