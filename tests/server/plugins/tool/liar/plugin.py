def lie():
    return {"n": "not a number"}
